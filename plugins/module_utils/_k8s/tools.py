# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the Kubernetes phases need on the controller, and the fix for each missing piece (gpufabric.roce.k8s_tools).

Pure functions over the results the action plugin collected, so that the messages are unit-tested without a cluster."""

import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import secret_field

CLIENT_FIX = (
    "install the kubernetes Python client for that interpreter: pip install -r meta/ee-requirements.txt "
    "(from the collection's directory; in AWX, build the execution environment with meta/execution-environment.yml)"
)
COLLECTION_FIX = "ansible-galaxy collection install kubernetes.core (or -r requirements.yml from the collection's directory)"
HELM_FIX = "put helm (v3) on the PATH of %s, or set network_operator_helm_binary to its full path"


def collection_problem(found):
    if found:
        return None
    return "the collection kubernetes.core is not installed (the Kubernetes phases run its k8s, k8s_info and helm modules). Fix: %s" % COLLECTION_FIX


def client_problem(host, result, kubeconfig_desc, interpreter=None):
    """Problem with the client or the cluster access, from a kubernetes.core.k8s_info result (None when it worked)."""
    if not result.get("failed"):
        return None
    msg = " ".join(str(result.get("msg") or "").split())
    if "kubernetes" in msg and ("import" in msg.lower() or "required python library" in msg.lower()):
        return "%s: the kubernetes Python client is missing for %s. Fix: %s" % (
            host, interpreter or "the Python interpreter Ansible uses there", CLIENT_FIX)
    return ("%s: cannot reach the cluster with kubeconfig %s: %s. Fix: point network_operator_kubeconfig (a path or the "
            "kubeconfig's content) and network_operator_kube_context at the cluster, or set KUBECONFIG for the controller"
            % (host, kubeconfig_desc, msg[:600]))


# What ansible.builtin.command says when the program could not be started at all: the OSError's errno as rc and, from
# ansible-core 2.19, only "Error executing command." as msg (before 2.19, the OSError's text).
_NOT_FOUND, _NOT_EXECUTABLE = 2, 13


def helm_problem(host, binary, result):
    if not result.get("failed") and not result.get("rc"):
        return None
    msg = " ".join(str(result.get("msg") or "").split())
    started = not ("Error executing command" in msg or msg.startswith("[Errno"))
    where = ("at %s (network_operator_helm_binary)" % binary) if "/" in binary else "on PATH"
    if not started and result.get("rc") == _NOT_FOUND:
        return "%s: helm not found %s. Fix: %s" % (host, where, HELM_FIX % host)
    if not started and result.get("rc") == _NOT_EXECUTABLE:
        return "%s: helm %s is not executable (permission denied). Fix: chmod +x it, or %s" % (host, where, HELM_FIX % host)
    why = " ".join(str(result.get("stderr") or "").split()) or msg
    return "%s: helm (%s) cannot run: %s. Fix: %s" % (host, binary, why[:300] or "rc %s" % result.get("rc"), HELM_FIX % host)


# A kubeconfig string is shown only when it can be nothing but a path: one line, absolute or under ~, no blanks.
# Anything else may be a kubeconfig's content pasted as a string (YAML, JSON, base64), and that is a secret.
_PATH_RE = re.compile(r"^[/~][^\s{}\[\]\"']{0,4095}$")


# The kubeconfig option of the action plugins: not no_log, which on ansible-core 2.22 registers every string of a mapping
# (v1, Config, user names) as a secret for the rest of the run; the actions keep kubeconfig_secrets() out instead.
KUBECONFIG_OPTION = {"type": "raw"}


def kubeconfig_desc(kubeconfig, variable="network_operator_kubeconfig"):
    """How a message names the kubeconfig in use, never showing its content."""
    if isinstance(kubeconfig, dict):
        return "(content given in %s, not shown)" % variable
    if isinstance(kubeconfig, str) and _PATH_RE.match(kubeconfig):
        return kubeconfig
    if kubeconfig:
        return "(the value of %s, not shown: it is not the path of a file and may be a kubeconfig's content)" % variable
    return "(default: $KUBECONFIG or ~/.kube/config)"


# Keys of a kubeconfig whose values are credentials beside those whose names say so (core.secret_field: token,
# password, auth-provider, client-secret, ...): the client's private key, and the values of an exec plugin's env.
_KUBECONFIG_SECRET_KEYS = ("client-key-data",)
# And the keys secret_field() takes for credentials that are public: the cluster's CA (its name holds "auth").
_KUBECONFIG_PUBLIC_KEYS = ("certificate-authority", "certificate-authority-data")


def kubeconfig_secrets(kubeconfig):
    """The credentials a kubeconfig value carries, to keep out of every output (_common.secrets): a string that is not a
    path (content pasted as a string) whole; in a mapping, every string value of a key that names a credential, at any
    depth. Not its other strings (names, server, apiVersion v1, kind Config): ansible-core 2.22 would mask those wherever
    they appear, for the rest of the run."""
    if isinstance(kubeconfig, str):
        return {kubeconfig} if kubeconfig.strip() and not _PATH_RE.match(kubeconfig) else set()
    found = set()
    items = kubeconfig.items() if isinstance(kubeconfig, dict) else enumerate(kubeconfig) if isinstance(kubeconfig, (list, tuple)) else ()
    for key, value in items:
        if isinstance(value, str):
            secret = isinstance(key, str) and (secret_field(key) or key in _KUBECONFIG_SECRET_KEYS) and key not in _KUBECONFIG_PUBLIC_KEYS
            if secret and value.strip():
                found.add(value)
        elif key == "env" and isinstance(value, list):
            found.update(e["value"] for e in value if isinstance(e, dict) and isinstance(e.get("value"), str) and e["value"].strip())
        else:
            found.update(kubeconfig_secrets(value))
    return found
