# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which live objects belong to which rollout (fabric) in a cluster that several inventories share.

Every object the collection applies carries ``app.kubernetes.io/managed-by: gpufabric.roce`` and, since
issue 17, ``gpufabric.roce/fabric: <roce_fabric_name>``. A rollout prunes only its own fabric's objects,
refuses to take over another fabric's, and adopts the unlabelled objects of earlier versions that it
renders under the same names (the apply adds the label); the ones it does not render stay where they are.
Render mode writes the same labels into the manifests (``with_labels``, the one helper of both modes), so a tree that
a GitOps tool applied is this fabric's already when apply mode takes over.
"""

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import MANAGED_BY_LABEL, MANAGED_BY_VALUE

FABRIC_LABEL = "gpufabric.roce/fabric"


def with_labels(objects, labels):
    """Copies of the objects with ``labels`` added to each one's metadata.labels (the rendered objects stay as they are).
    What apply mode applies (gpufabric.roce.k8s_apply) and render mode writes (gpufabric.roce.manifest_files)."""
    if not labels:
        return objects
    out = []
    for definition in objects:
        obj = dict(definition)
        meta = dict(obj.get("metadata") or {})
        meta["labels"] = dict(meta.get("labels") or {}, **labels)
        obj["metadata"] = meta
        out.append(obj)
    return out


def _key(obj):
    meta = obj.get("metadata") or {}
    return (meta.get("namespace"), obj.get("kind"), meta.get("name"))


def _ref(obj):
    meta = obj.get("metadata") or {}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")}}


def _name(obj):
    meta = obj.get("metadata") or {}
    return "%s/%s" % (obj.get("kind"), meta.get("name"))


def _sorted(objs):
    return sorted(objs, key=lambda o: (o["kind"], o["metadata"]["namespace"] or "", o["metadata"]["name"]))


def fabric_ownership(live, rendered, fabric):
    """Sort the live objects of the collection (read before the apply) by what this rollout may do with them.

    ``live``: objects as kubernetes.core.k8s_info returns them (each with ``kind``); ``rendered``: what this
    inventory renders now; ``fabric``: this rollout's name. Returns a dict:

    - ``orphans``: this fabric's objects that the inventory no longer renders (what pruning deletes);
    - ``conflicts``: messages, one per rendered object whose name is already taken by another fabric's object,
      and ``conflict_fabrics``: those fabrics' names;
    - ``adopted`` / ``unclaimed``: ``<kind>/<name>`` of the unlabelled objects of earlier versions that this
      rollout renders (the apply adds its label) / does not render (never pruned by any fabric);
    - ``foreign_fabric``: true when this fabric has live objects to prune but none of the rendered ones exists
      under it: the signature of a second inventory that uses the same fabric name, not of removed nodes.
    """
    wanted = {_key(o) for o in rendered or []}
    orphans, conflicts, adopted, unclaimed, owners = [], [], [], [], set()
    kept = 0
    for obj in live or []:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if labels.get(MANAGED_BY_LABEL) != MANAGED_BY_VALUE:
            continue
        owner = labels.get(FABRIC_LABEL)
        mine = _key(obj) in wanted
        if owner is None:
            (adopted if mine else unclaimed).append(_name(obj))
        elif owner != fabric:
            if mine:
                owners.add(owner)
                ns = (obj.get("metadata") or {}).get("namespace")
                conflicts.append(
                    "%s%s belongs to fabric %r (label %s), this inventory is fabric %r"
                    % (_name(obj), " in namespace %s" % ns if ns else "", owner, FABRIC_LABEL, fabric)
                )
        elif mine:
            kept += 1
        else:
            orphans.append(_ref(obj))
    return {
        "orphans": _sorted(orphans),
        "conflicts": sorted(conflicts),
        "conflict_fabrics": sorted(owners),
        "adopted": sorted(adopted),
        "unclaimed": sorted(unclaimed),
        "foreign_fabric": bool(orphans) and kept == 0,
    }


# Teardown deletes the networks before the policies: a SriovNetwork's NetworkAttachmentDefinition points at
# the policy's resource, and the policies' deletion is what makes the config daemons drop the VFs.
# A CIDRPool after the SriovNetworks that hand out its addresses. A NicConfigurationTemplate after the policies: the
# operator then clears its NICs' spec and leaves their firmware and QoS as they are (nothing is reset).
# The claim templates first: no new pod then claims a VF of a network being deleted.
_TEARDOWN_ORDER = {"ResourceClaimTemplate": 0, "SriovNetwork": 1, "SriovIBNetwork": 1, "CIDRPool": 2, "SriovNetworkNodePolicy": 3,
                   "NicConfigurationTemplate": 4, "ConfigMap": 5, "SriovNetworkPoolConfig": 6}
# Kinds read by the collection's label only, never by CRD: deleting the CRDs would not delete their unlabelled objects.
_READ_BY_LABEL = ("ConfigMap", "ResourceClaimTemplate")


def fabric_teardown(live, fabric):
    """What the teardown of rollout ``fabric`` deletes and what it leaves, from every live object of the kinds it
    manages (read without a label selector, so that the objects nobody labelled are seen too). Returns a dict:

    - ``delete``: references of this fabric's objects, DRA claim templates first, then networks, then policies, then the
      NCCL ConfigMap, the drain pool last;
    - ``policies``: the names of this fabric's policies (the node states drop their VFs once they are gone);
    - ``other_fabrics``: the other rollouts (fabric names) whose objects are in the cluster: they still use the
      operator, so it stays;
    - ``kept``: ``<kind>/<name>`` of every object left in place (other fabrics', earlier versions' without a fabric
      label, and objects the collection did not make): what deleting the CRDs would also delete.
    """
    delete, kept, others = [], [], set()
    for obj in live or []:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        managed = labels.get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE
        owner = labels.get(FABRIC_LABEL)
        if managed and owner == fabric:
            delete.append(_ref(obj))
            continue
        if managed and owner is not None:
            others.add(owner)
        if obj.get("kind") not in _READ_BY_LABEL:
            kept.append(_name(obj))
    delete.sort(key=lambda o: (_TEARDOWN_ORDER.get(o["kind"], 9), o["metadata"]["namespace"] or "", o["metadata"]["name"]))
    return {
        "delete": delete,
        "policies": sorted(o["metadata"]["name"] for o in delete if o["kind"] == "SriovNetworkNodePolicy"),
        "other_fabrics": sorted(others),
        "kept": sorted(kept),
    }
