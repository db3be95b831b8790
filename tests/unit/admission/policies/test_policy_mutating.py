"""The MutatingAdmissionPolicy step (`runtime.server.admission.policies.mutating`) in the admission chain: which
policies mutate, in order, defaults after each, reinvocation as kube's policyReinvokeContext, kube's PolicyError
refusals and metrics; one test per rule."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.policy_fakes import AR, FakeContext, namespace, request
from runtime.machinery import errors
from runtime.server.admission.chain import AdmissionChain
from runtime.server.admission.policies import MutatingPolicies
from runtime.server.kinds import AdmissionRequest

CONFIG_MAPS = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
               "resources": ["configmaps"]}


def policy(name: str, *expressions: str, reinvocation: str = "Never", **spec: Any) -> dict[str, Any]:
    mutations = [{"patchType": "JSONPatch", "jsonPatch": {"expression": e}} if e.lstrip().startswith("[") else
                 {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": e}} for e in expressions]
    return {"apiVersion": AR, "kind": "MutatingAdmissionPolicy", "metadata": {"name": name},
            "spec": {"failurePolicy": "Fail", "reinvocationPolicy": reinvocation, "mutations": mutations,
                     "matchConstraints": {"resourceRules": [dict(CONFIG_MAPS)], "matchPolicy": "Equivalent"}, **spec}}


def binding(name: str, policy_name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": AR, "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": {"policyName": policy_name, **spec}}


def config_map(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
            "data": dict(data)}


class Appender:
    """A later mutating step (a webhook's stand-in) that appends to data.trail once per pass."""

    name = "appender"

    async def mutate(self, req: AdmissionRequest) -> None:
        req.obj = {**req.obj, "data": {**req.obj.get("data", {}), "trail": req.obj["data"].get("trail", "") + "w"}}


async def mutated(context: FakeContext, obj: dict[str, Any], *later: Any) -> AdmissionRequest:
    req = request(obj)
    await AdmissionChain(context, mutating=[MutatingPolicies(context), *later]).mutate(req)  # type: ignore[arg-type]
    return req


def label(key: str, value: str) -> str:
    return f'Object{{metadata: Object.metadata{{labels: {{"{key}": "{value}"}}}}}}'


async def test_each_matching_binding_mutates_the_object():
    context = FakeContext(namespace("default"), policy("p", label("a", "1")), binding("b", "p"))
    req = await mutated(context, config_map())
    assert req.obj["metadata"]["labels"] == {"a": "1"}


async def test_mutations_run_in_order_and_see_each_others_changes():
    second = 'Object{metadata: Object.metadata{labels: {"b": object.metadata.labels["a"] + "2"}}}'
    context = FakeContext(namespace("default"), policy("p", label("a", "1"), second), binding("b", "p"))
    assert (await mutated(context, config_map())).obj["metadata"]["labels"] == {"a": "1", "b": "12"}


async def test_a_policy_without_a_matching_binding_does_not_mutate():
    bound = binding("b", "p", matchResources={"namespaceSelector": {"matchLabels": {"env": "test"}}})
    context = FakeContext(namespace("default"), policy("p", label("a", "1")), bound)
    assert "labels" not in (await mutated(context, config_map())).obj["metadata"]


async def test_a_false_match_condition_skips_the_policy():
    skipped = policy("p", label("a", "1"), matchConditions=[{"name": "no", "expression": "false"}])
    context = FakeContext(namespace("default"), skipped, binding("b", "p"))
    assert "labels" not in (await mutated(context, config_map())).obj["metadata"]


async def test_a_policy_that_changed_the_object_asks_for_reinvocation_and_if_needed_policies_rerun():
    trail = '[JSONPatch{op: "add", path: "/data/trail", value: object.data.trail + "p"}]'
    context = FakeContext(namespace("default"), policy("p", trail, reinvocation="IfNeeded"), binding("b", "p"))
    req = await mutated(context, config_map(trail=""), Appender())
    assert req.obj["data"]["trail"] == "pwpw"  # policy, webhook; then both again (the webhook changed it after)


async def test_a_never_policy_is_not_reinvoked():
    trail = '[JSONPatch{op: "add", path: "/data/trail", value: object.data.trail + "p"}]'
    context = FakeContext(namespace("default"), policy("p", trail), binding("b", "p"))
    req = await mutated(context, config_map(trail=""), Appender())
    assert req.obj["data"]["trail"] == "pww"


async def test_an_unchanged_object_is_not_reinvoked():
    unchanged = '[JSONPatch{op: "test", path: "/data/x", value: "never"}]'
    context = FakeContext(namespace("default"), policy("p", unchanged, reinvocation="IfNeeded"), binding("b", "p"))
    req = request(config_map(x="1"))
    await MutatingPolicies(context).mutate(req)
    assert "reinvoke" not in req.state


async def test_a_failed_mutation_is_kubes_policy_error_403_invalid():
    context = FakeContext(namespace("default"), policy("p", "Object{spec: Object.specx{}}"), binding("b", "p"))
    with pytest.raises(errors.StatusError) as refused:
        await mutated(context, config_map())
    text = ("policy 'p' with binding 'b' denied request: type mismatch: unexpected type name \"Object.specx\", "
            "expected \"Object.spec\", which matches field name path from root Object type")
    assert (refused.value.code, refused.value.reason, refused.value.message) == (403, "Invalid", text)
    assert refused.value.status()["details"]["causes"] == [{"message": text}]


async def test_a_configuration_error_is_forbidden():
    broken = policy("p", label("a", "1"), paramKind={"apiVersion": "v1", "kind": "Nope"})
    context = FakeContext(namespace("default"), broken, binding("b", "p", paramRef={"name": "x"}))
    with pytest.raises(errors.Forbidden) as refused:
        await mutated(context, config_map())
    assert refused.value.message == ('policy "p" denied request: failed to configure policy: failed to find resource '
                                     "referenced by paramKind: '/v1, Kind=Nope'")  # Go's GroupVersionKind.String()


async def test_errors_of_an_ignore_policy_are_dropped():
    ignored = policy("p", "Object{spec: Object.specx{}}", label("a", "1"), failurePolicy="Ignore")
    context = FakeContext(namespace("default"), ignored, binding("b", "p"))
    assert (await mutated(context, config_map())).obj["metadata"]["labels"] == {"a": "1"}


async def test_params_feed_the_mutation():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": "default"},
          "data": {"owner": "team-a"}}
    with_params = policy("p", 'Object{metadata: Object.metadata{labels: {"owner": params.data.owner}}}',
                         paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    context = FakeContext(namespace("default"), cm, with_params, binding("b", "p", paramRef={"name": "owner"}))
    req = request({**config_map(), "metadata": {"name": "x", "namespace": "default"}})
    await MutatingPolicies(context).mutate(req)
    assert req.obj["metadata"]["labels"] == {"owner": "team-a"}


async def test_the_kinds_defaults_apply_after_a_mutation():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    sidecar = ("Object{spec: Object.spec{containers: [Object.spec.containers{name: 'side', image: 'side:1'}]}}")
    pods = policy("p", sidecar)
    pods["spec"]["matchConstraints"]["resourceRules"][0]["resources"] = ["pods"]
    context = FakeContext(namespace("default"), pods, binding("b", "p"))
    req = request(pod)
    await MutatingPolicies(context).mutate(req)
    added = [c for c in req.obj["spec"]["containers"] if c["name"] == "side"][0]
    assert added["imagePullPolicy"] == "IfNotPresent" and added["terminationMessagePolicy"] == "File"


async def test_mutations_are_counted_as_kube_1_36s_metric():
    context = FakeContext(namespace("default"), policy("p", label("a", "1"), "Object{spec: Object.specx{}}"),
                          binding("b", "p"))
    with pytest.raises(errors.StatusError):
        await mutated(context, config_map())
    sample = context.admission_metrics.sample
    assert [sample("apiserver_mutating_admission_policy_check_total",
                   {"policy": "p", "policy_binding": "b", "error_type": t}) for t in ("no_error", "invalid_error")] == [
        1.0, 1.0]
