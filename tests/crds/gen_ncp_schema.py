"""Generate plugins/module_utils/_k8s/ncp_schema_data.py from network-operator's NicClusterPolicy CRD.

    python tests/crds/gen_ncp_schema.py <crds>/network-operator-v26.4.1/mellanox.com_nicclusterpolicies.yaml \\
        > plugins/module_utils/_k8s/ncp_schema_data.py

Keeps the keywords that decide validity (see KEEP); tests/unit/plugins/module_utils/test_k8s_ncp_schema.py
checks that the embedded schema is what this gives for the CRD in $GPUFABRIC_CRDS_DIR.
"""

import json
import sys

import yaml

KEEP = ("type", "properties", "required", "items", "anyOf", "allOf", "oneOf", "additionalProperties", "pattern", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "maxLength", "minLength", "maxItems", "minItems", "enum", "nullable",
        "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields")


def strip(n):
    if isinstance(n, list):
        return [strip(x) for x in n]
    if not isinstance(n, dict):
        return n
    out = {}
    for k, v in n.items():
        if k == "properties":
            out[k] = {a: strip(b) for a, b in v.items()}
        elif k in KEEP:
            out[k] = strip(v)
    return out


def spec_schema(path):
    with open(path) as fh:
        d = yaml.safe_load(fh)
    (ver,) = [v for v in d["spec"]["versions"] if v.get("served", True)]
    return strip(ver["schema"]["openAPIV3Schema"]["properties"]["spec"])


if __name__ == "__main__":
    text = json.dumps(spec_schema(sys.argv[1]), sort_keys=True, separators=(",", ":"))
    chunks = [text[i:i + 140] for i in range(0, len(text), 140)]
    body = "\n".join("    %r" % c for c in chunks)
    sys.stdout.write('''# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# fmt: off
"""The openAPIV3Schema of NicClusterPolicy ``spec`` (mellanox.com/v1alpha1) from network-operator 26.4.1's
CRD (mellanox.com_nicclusterpolicies.yaml), reduced to the keywords that decide validity (descriptions,
defaults, list/map types and the CEL immutability rules dropped). Generated; do not edit by hand:
tests/unit/plugins/module_utils/test_k8s_ncp_schema.py regenerates it from the CRD and compares.
"""

import json

NCP_SCHEMA_CHART_VERSION = "26.4.1"
NCP_SPEC_SCHEMA = json.loads(
%s
)
''' % body)
