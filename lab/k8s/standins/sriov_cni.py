# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sriov-network-operator's SriovNetwork controller, as a stand-in: SriovNetwork -> NetworkAttachmentDefinition.

Upstream (k8snetworkplumbingwg/sriov-network-operator): controllers/generic_network_controller.go
Reconcile and api/v1/helper.go SriovNetwork.RenderNetAttDef with the template
bindata/manifests/cni-config/sriov/sriov-cni-config.yaml:
- only SriovNetworks in the operator namespace are reconciled, and only once a node state exists;
- the finalizer netattdef.finalizers.sriovnetwork.openshift.io is added; on deletion the NAD is
  deleted, then the finalizer removed;
- the NAD is named like the SriovNetwork, in spec.networkNamespace (default: the SriovNetwork's
  namespace, which must exist), annotated k8s.v1.cni.cncf.io/resourceName: <RESOURCE_PREFIX>/<resourceName>;
  the SriovNetwork is annotated with the last target namespace, and a NAD left in an old one is deleted;
- spec.config is the sriov CNI JSON in the template's key order.
"""

import json
import logging

from . import _kube

LOG = logging.getLogger("standins.sriov_cni")
FINALIZER = "netattdef.finalizers.sriovnetwork.openshift.io"
LAST_NAMESPACE = "operator.sriovnetwork.openshift.io/last-network-namespace"
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"


def target_namespace(network):
    return (network.get("spec") or {}).get("networkNamespace") or network["metadata"]["namespace"]


def render_config(network):
    """The CNI JSON of RenderNetAttDef, pretty-printed like the controller's formatJSON."""
    spec = network.get("spec") or {}
    name = network["metadata"]["name"]
    inner = ['"type":"sriov"', '"vlan":%d' % (spec.get("vlan") or 0)]
    if spec.get("spoofChk") in ("on", "off"):
        inner.append('"spoofchk":"%s"' % spec["spoofChk"])
    if spec.get("trust") in ("on", "off"):
        inner.append('"trust":"%s"' % spec["trust"])
    if 0 <= (spec.get("vlanQoS") or 0) <= 7:
        inner.append('"vlanQoS":%d' % (spec.get("vlanQoS") or 0))
    if spec.get("vlanProto"):
        inner.append('"vlanProto":"%s"' % spec["vlanProto"])
    for key, cni in (("minTxRate", "min_tx_rate"), ("maxTxRate", "max_tx_rate")):
        if spec.get(key) is not None and spec[key] >= 0:
            inner.append('"%s":%d' % (cni, spec[key]))
    if spec.get("capabilities"):
        inner.append('"capabilities":%s' % spec["capabilities"])
    if spec.get("linkState") in ("enable", "disable", "auto"):
        inner.append('"link_state":"%s"' % spec["linkState"])
    if spec.get("logLevel"):
        inner.append('"logLevel":"%s"' % spec["logLevel"])
    if spec.get("logFile"):
        inner.append('"logFile":"%s"' % spec["logFile"])
    # Upstream strips every whitespace character from the IPAM string (strings.Fields).
    inner.append('"ipam":%s' % ("".join(spec["ipam"].split()) if spec.get("ipam") else "{}"))
    body = ",".join(inner)
    if spec.get("metaPlugins"):
        body = '"plugins":[{%s},%s]' % (body, spec["metaPlugins"])
    raw = '{"cniVersion":"1.0.0","name":"%s",%s}' % (name, body)
    return json.dumps(json.loads(raw), indent=2)


def render_nad(network, prefix):
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {"name": network["metadata"]["name"], "namespace": target_namespace(network),
                     "annotations": {RESOURCE_ANNOTATION: "%s/%s" % (prefix, (network.get("spec") or {}).get("resourceName", ""))}},
        "spec": {"config": render_config(network)},
    }


def _nad_path(namespace, name=None):
    return _kube.path("k8s.cni.cncf.io", "v1", "network-attachment-definitions", namespace=namespace, name=name)


class SriovNetworkStandin:
    """The SriovNetwork reconciler of the operator stand-in."""

    name = "sriov-networks"

    def __init__(self, kube, namespace, prefix):
        self.kube = kube
        self.namespace = namespace
        self.prefix = prefix
        self.bad = {}

    def _network_path(self, name):
        return _kube.path("sriovnetwork.openshift.io", "v1", "sriovnetworks", namespace=self.namespace, name=name)

    def _set_finalizers(self, network, finalizers):
        meta = network["metadata"]
        self.kube.patch(self._network_path(meta["name"]), {"metadata": {"finalizers": finalizers or None, "resourceVersion": meta["resourceVersion"]}})

    def _delete(self, network):
        finalizers = network["metadata"].get("finalizers") or []
        if FINALIZER in finalizers:
            self.kube.delete(_nad_path(target_namespace(network), network["metadata"]["name"]))
            self._set_finalizers(network, [f for f in finalizers if f != FINALIZER])
            LOG.info("SriovNetwork %s deleted: NAD %s/%s removed", network["metadata"]["name"], target_namespace(network), network["metadata"]["name"])

    def _reconcile(self, network):
        meta = network["metadata"]
        if FINALIZER not in (meta.get("finalizers") or []):
            self._set_finalizers(network, (meta.get("finalizers") or []) + [FINALIZER])
            return "finalizer added"
        try:
            nad = render_nad(network, self.prefix)
        except ValueError as err:
            if self.bad.get(meta["name"]) != str(err):
                self.bad[meta["name"]] = str(err)
                LOG.error("SriovNetwork %s: the rendered CNI config is not JSON (%s); no NAD", meta["name"], err)
            return "invalid config"
        ns = nad["metadata"]["namespace"]
        last = (meta.get("annotations") or {}).get(LAST_NAMESPACE)
        if last and last != ns:
            self.kube.delete(_nad_path(last, meta["name"]))
        if self.kube.get_or_none(_kube.path("", "v1", "namespaces", name=ns)) is None:
            return "waiting for namespace %s" % ns
        found = self.kube.get_or_none(_nad_path(ns, meta["name"]))
        if found is None:
            self.kube.create(_nad_path(ns), nad)
            LOG.info("NAD %s/%s created for SriovNetwork %s", ns, meta["name"], meta["name"])
        elif found.get("spec") != nad["spec"] or (found["metadata"].get("annotations") or {}) != nad["metadata"]["annotations"]:
            nad["metadata"]["resourceVersion"] = found["metadata"]["resourceVersion"]
            self.kube.request("PUT", _nad_path(ns, meta["name"]), body=nad)
            LOG.info("NAD %s/%s updated", ns, meta["name"])
        if last != ns:
            self.kube.patch(self._network_path(meta["name"]), {"metadata": {"annotations": {LAST_NAMESPACE: ns}}})
        return "nad %s/%s" % (ns, meta["name"])

    def tick(self, _t):
        networks = self.kube.items(_kube.path("sriovnetwork.openshift.io", "v1", "sriovnetworks", namespace=self.namespace))
        if not networks:
            return {}
        if not self.kube.items(_kube.path("sriovnetwork.openshift.io", "v1", "sriovnetworknodestates", namespace=self.namespace), limit=1):
            return {"waiting_for": "a SriovNetworkNodeState (upstream requeues until one exists)"}
        note = {}
        for network in networks:
            try:
                if network["metadata"].get("deletionTimestamp"):
                    self._delete(network)
                    note[network["metadata"]["name"]] = "deleted"
                else:
                    note[network["metadata"]["name"]] = self._reconcile(network)
            except _kube.KubeError as err:
                if not _kube.status_is(err, 404, 409):
                    raise
        return note
