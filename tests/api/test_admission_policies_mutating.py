"""Kubernetes' documented MutatingAdmissionPolicy examples (kubernetes.io, "Mutating Admission Policy", v1 as
Kubernetes 1.36 serves it), each in a test on an in-process server with Kubernetes' names: the sidecar injected
by an ApplyConfiguration and by a JSONPatch, a label added with `jsonpatch.escapeKey`, reinvocation, and what kube
refuses (an atomic list in an apply configuration), then validation after mutation.

The page's ApplyConfiguration example sets the sidecar's `args`, an atomic list that kube's own check refuses
(`may not mutate atomic arrays, maps or structs`); the test shows that refusal and injects the sidecar without
`args`, as kube accepts it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runtime.controller.testing import open_test_env
from runtime.machinery import errors
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")

AR = "admissionregistration.k8s.io/v1"
PODS = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
NO_SIDECAR = {"name": "does-not-already-have-sidecar",
              "expression": '!object.spec.initContainers.exists(ic, ic.name == "mesh-proxy")'}
SIDECAR_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sidecars.mutations.example.com
spec:
  group: mutations.example.com
  scope: Namespaced
  names: {plural: sidecars, singular: sidecar, kind: Sidecar}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""


def sidecar_policy(mutation: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": AR, "kind": "MutatingAdmissionPolicy", "metadata": {"name": "sidecar-policy.example.com"},
            "spec": {"paramKind": {"kind": "Sidecar", "apiVersion": "mutations.example.com/v1"},
                     "matchConstraints": {"resourceRules": [PODS]}, "matchConditions": [NO_SIDECAR],
                     "failurePolicy": "Fail", "reinvocationPolicy": "IfNeeded", "mutations": [mutation], **spec}}


def binding(name: str, policy_name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": AR, "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": {"policyName": policy_name, **spec}}


def pod(name: str = "myapp") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"initContainers": [{"name": "myapp-initializer", "image": "example/initializer:v1.0.0"}],
                     "containers": [{"name": "myapp", "image": "example/myapp:v1.0.0"}]}}


def apply_configuration(expression: str) -> dict[str, Any]:
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}}


def json_patch(expression: str) -> dict[str, Any]:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}


SIDECAR = """Object{
  spec: Object.spec{
    initContainers: [
      Object.spec.initContainers{
        name: "mesh-proxy",
        image: "mesh/proxy:v1.0.0",%s
        restartPolicy: "Always"
      }
    ]
  }
}"""


def init_containers(obj: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(c["name"], c["image"], c.get("restartPolicy")) for c in obj["spec"]["initContainers"]]


async def crd_env(tmp_path: Path) -> Any:
    (tmp_path / "sidecar.yaml").write_text(SIDECAR_CRD)
    return open_test_env(domain="k8s.io", crds=[tmp_path / "sidecar.yaml"])


async def test_an_apply_configuration_injects_the_sidecar(autojump_clock: Any, tmp_path: Path) -> None:
    async with await crd_env(tmp_path) as env:
        await env.client.create(sidecar_policy(apply_configuration(SIDECAR % "")))
        await env.client.create(binding("sidecar-binding-test.example.com", "sidecar-policy.example.com"))
        made = await env.client.create(pod())
        assert sorted(init_containers(made)) == [("mesh-proxy", "mesh/proxy:v1.0.0", "Always"),
                                                 ("myapp-initializer", "example/initializer:v1.0.0", None)]
        sidecar = next(c for c in made["spec"]["initContainers"] if c["name"] == "mesh-proxy")
        assert sidecar["imagePullPolicy"] == "IfNotPresent"  # defaulted after the mutation, as kube does
        stored = await env.client.get(env.scheme.by_api_version_kind("v1", "Pod"), "myapp", namespace="default")
        assert stored["spec"]["initContainers"] == made["spec"]["initContainers"]


async def test_an_apply_configuration_may_not_set_an_atomic_list(autojump_clock: Any, tmp_path: Path) -> None:
    async with await crd_env(tmp_path) as env:
        await env.client.create(sidecar_policy(apply_configuration(SIDECAR % '\n        args: ["proxy", "sidecar"],')))
        await env.client.create(binding("sidecar-binding-test.example.com", "sidecar-policy.example.com"))
        with pytest.raises(errors.StatusError) as refused:
            await env.client.create(pod())
        assert (refused.value.code, refused.value.reason) == (403, "Invalid")
        assert refused.value.message == (
            "policy 'sidecar-policy.example.com' with binding 'sidecar-binding-test.example.com' denied request: "
            "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: "
            ".spec.initContainers[0].args")


async def test_a_json_patch_injects_the_sidecar(autojump_clock: Any, tmp_path: Path) -> None:
    async with await crd_env(tmp_path) as env:
        await env.client.create(sidecar_policy(json_patch("""[
            JSONPatch{
              op: "add", path: "/spec/initContainers/-",
              value: Object.spec.initContainers{
                name: "mesh-proxy",
                image: "mesh-proxy/v1.0.0",
                restartPolicy: "Always"
              }
            }
          ]""")))
        await env.client.create(binding("sidecar-binding-test.example.com", "sidecar-policy.example.com"))
        made = await env.client.create(pod())
        assert init_containers(made) == [("myapp-initializer", "example/initializer:v1.0.0", None),
                                         ("mesh-proxy", "mesh-proxy/v1.0.0", "Always")]


async def test_a_json_patch_adds_a_label_with_an_escaped_key(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create({"apiVersion": AR, "kind": "MutatingAdmissionPolicy",
                                 "metadata": {"name": "environment-label.example.com"},
                                 "spec": {"matchConstraints": {"resourceRules": [
                                     {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                      "resources": ["configmaps"]}]},
                                     "reinvocationPolicy": "Never",
                                     "mutations": [json_patch("""[
                                         JSONPatch{
                                           op: "add",
                                           path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/environment"),
                                           value: "test"
                                         },
                                       ]""")]}})
        await env.client.create(binding("environment-label", "environment-label.example.com"))
        made = await env.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": "c", "namespace": "default", "labels": {"a": "b"}}})
        assert made["metadata"]["labels"] == {"a": "b", "example.com/environment": "test"}


async def test_an_if_needed_policy_is_reinvoked_after_a_later_policy_changes_the_object(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        rule = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
        # "a-copy" runs first (policies go in name order) and copies a label "b-set" adds after it.
        await env.client.create({"apiVersion": AR, "kind": "MutatingAdmissionPolicy", "metadata": {"name": "a-copy"},
                                 "spec": {"matchConstraints": {"resourceRules": [rule]},
                                          "reinvocationPolicy": "IfNeeded",
                                          "matchConditions": [{"name": "has-source",
                                                               "expression": "'source' in object.metadata.labels"}],
                                          "mutations": [apply_configuration(
                                              'Object{metadata: Object.metadata{labels: {"copy": '
                                              'object.metadata.labels["source"]}}}')]}})
        await env.client.create({"apiVersion": AR, "kind": "MutatingAdmissionPolicy", "metadata": {"name": "b-set"},
                                 "spec": {"matchConstraints": {"resourceRules": [rule]},
                                          "reinvocationPolicy": "Never",
                                          "mutations": [apply_configuration(
                                              'Object{metadata: Object.metadata{labels: {"source": "b"}}}')]}})
        await env.client.create(binding("a-copy", "a-copy"))
        await env.client.create(binding("b-set", "b-set"))
        made = await env.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": "c", "namespace": "default", "labels": {"source": "x"}}})
        assert made["metadata"]["labels"] == {"source": "b", "copy": "b"}


async def test_a_mutated_object_is_then_validated(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create({"apiVersion": AR, "kind": "MutatingAdmissionPolicy", "metadata": {"name": "bad"},
                                 "spec": {"matchConstraints": {"resourceRules": [
                                     {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                      "resources": ["configmaps"]}]}, "reinvocationPolicy": "Never",
                                     "mutations": [apply_configuration(
                                         'Object{metadata: Object.metadata{labels: {"bad key!": "x"}}}')]}})
        await env.client.create(binding("bad", "bad"))
        with pytest.raises(errors.Invalid) as refused:
            await env.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": "c", "namespace": "default"}})
        assert "metadata.labels: Invalid value: \"bad key!\"" in refused.value.message


async def test_mutations_are_counted_on_the_servers_metrics(nursery: Any, tmp_path: Path) -> None:
    server = await start_in_process(nursery, tmp_path, api_domain="k8s.io")
    async with server.client() as c:
        await c.post(f"/apis/{AR}/mutatingadmissionpolicies", json={
            "apiVersion": AR, "kind": "MutatingAdmissionPolicy", "metadata": {"name": "label"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                             "operations": ["CREATE"], "resources": ["configmaps"]}]},
                     "reinvocationPolicy": "Never",
                     "mutations": [apply_configuration('Object{metadata: Object.metadata{labels: {"a": "b"}}}')]}})
        await c.post(f"/apis/{AR}/mutatingadmissionpolicybindings", json=binding("label", "label"))
        made = await c.post("/api/v1/namespaces/default/configmaps",
                            json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        assert made.status_code == 201 and made.json()["metadata"]["labels"] == {"a": "b"}
        metrics = (await c.get("/metrics")).text
    assert ('apiserver_mutating_admission_policy_check_total{error_type="no_error",policy="label",'
            'policy_binding="label"} 1.0') in metrics
