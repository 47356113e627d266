# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node-feature-discovery stand-in: NodeFeatureRules evaluated against the fake nodes' PCI devices.

Upstream (kubernetes-sigs/node-feature-discovery, pkg/nfd-master/nfd-master.go and
pkg/apis/nfd/nodefeaturerule/rule.go): nfd-worker reports each node's PCI devices (feature
`pci.device`, attributes vendor/device/class), nfd-master evaluates every NodeFeatureRule and puts
the rule's labels on the matching nodes, prefixed `feature.node.kubernetes.io/` when they have no
namespace, and records them in the `nfd.node.kubernetes.io/feature-labels` annotation so it can
take them off again. network-operator's chart ships the rule `nvidia-nics-rules` (label
`pci-15b3.present` for vendor 15b3, class 0200/0207); the network-operator reads that label.

Only `matchFeatures` on `pci.device` with the operators In, NotIn, Exists and DoesNotExist are
evaluated; any other rule matches nothing (and is logged once), so it can never label by mistake.
"""

import logging

from . import _kube, hardware

LOG = logging.getLogger("standins.nfd")
FEATURE_LABELS_ANNOTATION = "nfd.node.kubernetes.io/feature-labels"
DEFAULT_PREFIX = "feature.node.kubernetes.io/"
RULES = _kube.path("nfd.k8s-sigs.io", "v1alpha1", "nodefeaturerules")


def pci_devices(spec):
    return [{"vendor": i["vendor"], "device": i["deviceID"], "class": hardware.pci_class(i)} for i in spec["interfaces"]]


def _expr_matches(value, expr):
    op = expr.get("op")
    values = [str(v) for v in expr.get("value") or []]
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is not None and value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    raise ValueError("operator %r is not evaluated by the NFD stand-in" % op)


def rule_matches(rule, devices):
    """True when every matchFeatures term holds for at least one PCI device of the node."""
    terms = rule.get("matchFeatures") or []
    if not terms or rule.get("matchAny"):
        raise ValueError("only matchFeatures rules are evaluated by the NFD stand-in")
    for term in terms:
        if term.get("feature") != "pci.device":
            raise ValueError("feature %r is not evaluated by the NFD stand-in" % term.get("feature"))
        exprs = term.get("matchExpressions") or {}
        if not any(all(_expr_matches(dev.get(attr), expr) for attr, expr in exprs.items()) for dev in devices):
            return False
    return True


def _label_key(key):
    return key if "/" in key else DEFAULT_PREFIX + key


class NfdStandin:
    """Labels the fake nodes from the NodeFeatureRules present in the cluster."""

    name = "nfd"

    def __init__(self, kube, nodes):
        self.kube = kube
        self.nodes = nodes
        self.unsupported = set()

    def _wanted(self, rules, spec):
        labels = {}
        devices = pci_devices(spec)
        for obj in rules:
            for rule in obj.get("spec", {}).get("rules") or []:
                try:
                    if rule_matches(rule, devices):
                        labels.update({_label_key(k): str(v) for k, v in (rule.get("labels") or {}).items()})
                except ValueError as err:
                    key = (obj["metadata"]["name"], rule.get("name"))
                    if key not in self.unsupported:
                        self.unsupported.add(key)
                        LOG.warning("NodeFeatureRule %s rule %r: %s; it labels nothing here", key[0], key[1], err)
        return labels

    def tick(self, _t):
        rules = self.kube.items(RULES)
        changed = 0
        for name, spec in self.nodes.items():
            node = self.kube.get_or_none(_kube.path("", "v1", "nodes", name=name))
            if node is None:
                continue
            meta = node["metadata"]
            wanted = self._wanted(rules, spec)
            previous = [k for k in (meta.get("annotations") or {}).get(FEATURE_LABELS_ANNOTATION, "").split(",") if k]
            current = meta.get("labels") or {}
            patch = {k: v for k, v in wanted.items() if current.get(k) != v}
            patch.update({_label_key(k): None for k in previous if _label_key(k) not in wanted and _label_key(k) in current})
            annotation = ",".join(sorted(k[len(DEFAULT_PREFIX):] if k.startswith(DEFAULT_PREFIX) else k for k in wanted))
            if patch or annotation != ",".join(sorted(previous)):
                body = {"metadata": {"labels": patch, "annotations": {FEATURE_LABELS_ANNOTATION: annotation or None}}}
                self.kube.patch(_kube.path("", "v1", "nodes", name=name), body, strategic=True)
                LOG.info("node %s: NFD labels %s", name, patch)
                changed += 1
        return {"rules": len(rules), "nodes_relabelled": changed}
