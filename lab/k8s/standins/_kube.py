# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A thin JSON client over the `kubernetes` package's ApiClient.

The stand-ins list every second; building the generated pydantic models for each list would cost
more CPU than everything else they do, so they read plain dicts (json.loads of the response).
Custom resources only accept JSON merge patches; built-in kinds get strategic merge patches so
that `status.conditions` merges by `type`, as kubelet's own patches do.
"""

import contextlib
import json
from urllib.parse import quote, urlencode

import kubernetes.client
import kubernetes.config
import urllib3

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


class KubeError(Exception):
    """A non-2xx answer from the API server."""

    def __init__(self, method, path, status, body):
        self.status = status
        self.body = body
        try:
            message = json.loads(body).get("message", body)
        except ValueError:
            message = body
        self.message = message
        super().__init__("%s %s: HTTP %s: %s" % (method, path, status, message))


def status_is(err, *codes):
    return isinstance(err, KubeError) and err.status in codes


def path(group, version, resource, *, namespace=None, name=None, sub=None):
    """URL path of a resource; group "" is the core API."""
    base = "/api/%s" % version if not group else "/apis/%s/%s" % (group, version)
    if namespace:
        base += "/namespaces/%s" % quote(namespace, safe="")
    base += "/" + resource
    if name:
        base += "/" + quote(name, safe="")
    if sub:
        base += "/" + sub
    return base


class Kube:
    """JSON-in, JSON-out access to one API server, authenticated by a kubeconfig."""

    def __init__(self, kubeconfig, timeout=30):
        cfg = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
        self._api = kubernetes.client.ApiClient(cfg)
        self._host = cfg.host
        self._timeout = timeout
        # While not None (reads_cached): the answers to the GETs of this stand-in loop, by URL; any write empties it.
        self._reads = None
        # Requests that change something (anything but GET; a Node's Lease renewal, the kubelet's heartbeat every 10 s,
        # does not count), for the loop to tell a quiet loop from a busy one.
        self.writes = 0

    def close(self):
        self._api.close()

    @contextlib.contextmanager
    def reads_cached(self):
        """One stand-in loop: a GET of a URL already read in it, with no write since, is answered from that read
        (parsed anew: callers may change what they get). The components of a loop read the same nodes, node states and
        policies several times within milliseconds; each read costs the API server and etcd more CPU than the stand-in
        spends on it. Outside this block every request goes to the server."""
        self._reads = {}
        try:
            yield
        finally:
            self._reads = None

    def request(self, method, url_path, body=None, query=None, content_type="application/json"):
        full = url_path + ("?" + urlencode(query) if query else "")
        if method != "GET" and "/leases/" not in url_path:
            self.writes += 1
        if self._reads is not None:
            if method != "GET":
                self._reads.clear()
            elif full in self._reads:
                return self._answer(method, url_path, *self._reads[full])
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        _method, url, headers, body, _post = self._api.param_serialize(
            method=method, resource_path=full, header_params=headers, body=body, auth_settings=["BearerToken"]
        )
        resp = self._api.call_api(method, url, header_params=headers, body=body, _request_timeout=self._timeout)
        data = resp.read()
        if self._reads is not None and method == "GET":
            self._reads[full] = (resp.status, data)
        return self._answer(method, url_path, resp.status, data)

    @staticmethod
    def _answer(method, url_path, status, data):
        if not 200 <= status < 300:
            raise KubeError(method, url_path, status, data.decode("utf-8", "replace"))
        return json.loads(data) if data else {}

    def watch(self, url_path, timeout=60, **query):
        """Yield (event type, object) from a watch; list first and pass its resourceVersion to miss nothing."""
        query = dict(query, watch="true", timeoutSeconds=int(timeout))
        _method, url, headers, _body, _post = self._api.param_serialize(
            method="GET", resource_path=url_path + "?" + urlencode(query), header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
        )
        resp = self._api.rest_client.pool_manager.request(
            "GET", url, headers=headers, preload_content=False, timeout=urllib3.Timeout(connect=10, read=timeout + 10)
        )
        try:
            if resp.status != 200:
                raise KubeError("WATCH", url_path, resp.status, resp.read().decode("utf-8", "replace"))
            pending = b""
            for chunk in resp.stream(4096):
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.strip():
                        event = json.loads(line)
                        yield event["type"], event["object"]
        finally:
            resp.release_conn()

    def get(self, url_path, **query):
        return self.request("GET", url_path, query=query or None)

    def get_or_none(self, url_path):
        try:
            return self.get(url_path)
        except KubeError as err:
            if err.status == 404:
                return None
            raise

    def items(self, url_path, **query):
        """The items of a list; [] when the resource type is not served (its CRD is not installed yet)."""
        try:
            return self.get(url_path, **query).get("items") or []
        except KubeError as err:
            if err.status == 404:
                return []
            raise

    def create(self, url_path, body):
        return self.request("POST", url_path, body=body)

    def patch(self, url_path, body, strategic=False):
        return self.request("PATCH", url_path, body=body, content_type=STRATEGIC if strategic else MERGE)

    def delete(self, url_path, body=None):
        try:
            return self.request("DELETE", url_path, body=body)
        except KubeError as err:
            if err.status == 404:
                return None
            raise
