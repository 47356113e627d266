# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Live objects as the API server returns them, for the tests of what one rollout owns, prunes and tears down."""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.fabric import FABRIC_LABEL

NS = "nvidia-network-operator"


def obj(kind, name, fabric=None, managed=True):
    labels = {}
    if managed:
        labels["app.kubernetes.io/managed-by"] = "gpufabric.roce"
    if fabric is not None:
        labels[FABRIC_LABEL] = fabric
    return {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": kind, "metadata": {"name": name, "namespace": NS, "labels": labels}}
