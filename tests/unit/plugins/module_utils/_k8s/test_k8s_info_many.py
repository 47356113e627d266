# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.roce.k8s_info_many's logic: the queries checked before any request (the module's own argument spec, then
the ids), each answered by K8sService.find.

The cluster side (the real client against a real kube-apiserver) is proven in tests/k8s and molecule k8s, where the
SR-IOV phase, its teardown and every rollout wait read through this module."""

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.gpufabric.roce.plugins.action.rollout_wait import ActionModule
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.info_many import check_ids, read_all
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.wait import reads_for
from ansible_collections.gpufabric.roce.plugins.modules.k8s_info_many import ARGUMENT_SPEC


def check_queries(queries):
    """The queries as the module sees them: its argument spec's answer (ValueError with its errors), then the ids."""
    result = ArgumentSpecValidator(ARGUMENT_SPEC).validate({"queries": queries})
    if result.error_messages:
        raise ValueError("; ".join(result.error_messages))
    check_ids(result.validated_parameters["queries"])
    return result.validated_parameters["queries"]


class FindRecorder:
    """Stands in for kubernetes.core's K8sService: records each find() and answers from a table, a kind it does not
    know as k8s_info answers a kind whose CRD is not installed."""

    def __init__(self, served):
        self.served = served
        self.calls = []

    def find(self, kind, api_version, **kwargs):
        self.calls.append(dict(kwargs, kind=kind, api_version=api_version))
        if (api_version, kind) not in self.served:
            return {"resources": [], "api_found": False, "msg": "Failed to find API for resource"}
        return {"resources": self.served[(api_version, kind)], "api_found": True}


def test_each_query_is_answered_under_its_id_as_k8s_info_answers_it():
    svc = FindRecorder({("sriovnetwork.openshift.io/v1", "SriovNetworkNodeState"): [{"metadata": {"name": "node1"}}]})
    queries = check_queries([
        {"id": "states", "api_version": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodeState", "namespace": "ns"},
        {"id": "templates", "api_version": "configuration.net.nvidia.com/v1alpha1", "kind": "NicConfigurationTemplate",
         "namespace": "ns", "label_selectors": ["app.kubernetes.io/managed-by=gpufabric.roce"]},
    ])
    results = read_all(svc, queries)
    assert results == {"states": {"api_found": True, "resources": [{"metadata": {"name": "node1"}}]},
                       "templates": {"api_found": False, "resources": []}}
    assert svc.calls == [
        {"kind": "SriovNetworkNodeState", "api_version": "sriovnetwork.openshift.io/v1", "name": None, "namespace": "ns",
         "label_selectors": [], "field_selectors": []},
        {"kind": "NicConfigurationTemplate", "api_version": "configuration.net.nvidia.com/v1alpha1", "name": None, "namespace": "ns",
         "label_selectors": ["app.kubernetes.io/managed-by=gpufabric.roce"], "field_selectors": []},
    ]


def test_defaults_are_k8s_infos():
    assert check_queries([{"id": "nodes", "kind": "Node"}]) == [
        {"id": "nodes", "api_version": "v1", "kind": "Node", "name": None, "namespace": None, "label_selectors": [], "field_selectors": []}]


@pytest.mark.parametrize(("queries", "message"), [
    # what no argument spec can say: the module's own check, with the fix
    ([{"id": "a", "kind": "Node"}, {"id": "a", "kind": "Pod"}], "queries[1]: id 'a' is used twice. Fix: give each query an id of its own"),
    # the argument spec's
    ([{"kind": "Node"}], "missing required arguments: id found in queries"),
    ([{"id": "a"}], "missing required arguments: kind found in queries"),
    ([{"id": "a", "kind": "Node", "selector": "x"}], "queries.selector. Supported parameters include: api_version, field_selectors, id, kind"),
    (["Node"], "Elements value for option 'queries' is of type str and we were unable to convert to dict"),
])
def test_bad_queries_are_refused_before_any_request(queries, message):
    svc = FindRecorder({})
    with pytest.raises(ValueError, match=None) as err:
        read_all(svc, check_queries(queries))
    assert message in str(err.value)
    assert svc.calls == []


class OneModuleRun:
    """Stands in for ActionBase._execute_module: records each module run and answers as k8s_info_many would."""

    def __init__(self, answer):
        self.answer = answer
        self.runs = []

    def _execute_module(self, module_name, module_args, task_vars):
        self.runs.append((module_name, module_args))
        return self.answer


def test_a_rollout_wait_poll_reads_everything_in_one_module_run():
    reads = reads_for("nic_cluster_policy", "ns", [])
    stub = OneModuleRun({"answers": {"ncp": {"api_found": True, "resources": [{"kind": "NicClusterPolicy"}]},
                                     "deployments": {"api_found": True, "resources": []}}})
    resources, error = ActionModule._read(stub, reads, {"context": "admin"}, {})
    assert (resources, error) == ({"ncp": [{"kind": "NicClusterPolicy"}], "deployments": []}, None)
    assert len(stub.runs) == 1
    name, args = stub.runs[0]
    assert name == "gpufabric.roce.k8s_info_many" and args["context"] == "admin"
    assert [q["id"] for q in args["queries"]] == ["ncp", "deployments"]
    assert check_queries(args["queries"])  # what the module will accept

    failed = OneModuleRun({"failed": True, "msg": "Unauthorized"})
    assert ActionModule._read(failed, reads, {}, {}) == ({}, "Unauthorized")
