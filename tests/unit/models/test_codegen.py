"""The models generator's rules (runtime.models.codegen), each by name, on the committed output and on small
documents of its own; the committed output is what the generator writes today."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

import runtime.models
from runtime.machinery.patch.schema import MapNode, schema_for
from runtime.models.base import Base64, field_extensions
from runtime.models.codegen import DEFAULT_OUT, DEFAULT_SOURCE, MARKER, generate
from runtime.models.codegen.plan import plan
from runtime.models.codegen.render import first_sentence, python_name, render_module
from runtime.models.k8s import KINDS
from runtime.models.k8s import admissionregistration_v1, apps_v1, core_v1, networking_v1, policy_v1, storage_v1

ROOT = Path(__file__).resolve().parents[3]


def test_the_committed_models_are_what_the_generator_writes(tmp_path):
    assert DEFAULT_SOURCE.is_dir(), f"the OpenAPI documents are missing: {DEFAULT_SOURCE}"
    written = generate(DEFAULT_SOURCE, tmp_path)
    committed = sorted(p.name for p in DEFAULT_OUT.glob("*.py"))
    assert [p.name for p in written] == committed
    stale = [p.name for p in written if p.read_text() != (DEFAULT_OUT / p.name).read_text()]
    assert stale == [], "run `python -m runtime.models.codegen` and commit runtime/models/k8s"


def test_every_generated_file_starts_with_the_marker_and_has_a_docstring_and_all():
    for path in DEFAULT_OUT.glob("*.py"):
        assert path.read_text().startswith(MARKER + "\n"), path
        module = importlib.import_module(f"runtime.models.k8s.{path.stem}".removesuffix(".__init__"))
        assert module.__doc__ and module.__all__, path


def test_a_list_carries_its_list_type_map_keys_and_patch_markers():
    assert field_extensions(core_v1.Container, "ports") == {
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
        "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "containerPort"}
    assert field_extensions(core_v1.PodSpec, "volumes")["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    # No list type in the document: atomic, as server-side apply takes it.
    assert field_extensions(core_v1.Container, "args") == {"x-kubernetes-list-type": "atomic"}


def test_a_field_other_than_a_list_carries_its_patch_strategy_and_map_type():
    assert field_extensions(apps_v1.DeploymentSpec, "strategy") == {"x-kubernetes-patch-strategy": "retainKeys"}
    assert field_extensions(policy_v1.PodDisruptionBudgetSpec, "selector") == {
        "x-kubernetes-patch-strategy": "replace"}


def test_an_atomic_definition_says_so_in_its_model_config():
    assert core_v1.NodeSelector.model_config["json_schema_extra"] == {"x-kubernetes-map-type": "atomic"}
    assert schema_for(core_v1.NodeSelector).atomic


def test_int32_and_int64_fields_are_range_checked():
    assert field_extensions(apps_v1.DeploymentSpec, "replicas") == {"format": "int32"}
    apps_v1.DeploymentSpec.model_validate({"replicas": (1 << 31) - 1})
    with pytest.raises(ValidationError):
        apps_v1.DeploymentSpec.model_validate({"replicas": 1 << 31})
    core_v1.PodSpec.model_validate({"activeDeadlineSeconds": 1 << 40})
    with pytest.raises(ValidationError):
        core_v1.PodSpec.model_validate({"activeDeadlineSeconds": 1 << 63})


@pytest.mark.parametrize("value, ok", [(8080, True), ("http", True), (True, False), (1.5, False), (1 << 31, False)])
def test_int_or_string_takes_an_int32_or_a_string(value, ok):
    if ok:
        assert core_v1.ServicePort.model_validate({"targetPort": value}).target_port == value
    else:
        with pytest.raises(ValidationError):
            core_v1.ServicePort.model_validate({"targetPort": value})


@pytest.mark.parametrize("value, ok", [("500m", True), ("1Gi", True), (2, True), (0.5, True), (True, False),
                                       ([1], False)])
def test_a_quantity_takes_a_string_or_a_number_as_kubernetes_decoder_does(value, ok):
    if ok:
        assert core_v1.ResourceRequirements.model_validate({"limits": {"cpu": value}}).limits == {"cpu": value}
    else:
        with pytest.raises(ValidationError):
            core_v1.ResourceRequirements.model_validate({"limits": {"cpu": value}})


def test_format_byte_is_base64_text():
    field = admissionregistration_v1.WebhookClientConfig.model_fields["ca_bundle"]
    assert field.annotation == typing.Optional[Base64]
    assert admissionregistration_v1.WebhookClientConfig.model_validate({"caBundle": "LS0t"}).ca_bundle == "LS0t"
    with pytest.raises(ValidationError):
        admissionregistration_v1.WebhookClientConfig.model_validate({"caBundle": 5})


def test_additional_properties_are_string_keyed_maps_with_their_map_type():
    assert storage_v1.StorageClass.model_fields["parameters"].annotation == typing.Optional[dict[str, str]]
    assert field_extensions(core_v1.PodSpec, "node_selector") == {"x-kubernetes-map-type": "atomic"}
    assert field_extensions(core_v1.ResourceRequirements, "limits") == {}
    node = schema_for(core_v1.PodSpec).child("nodeSelector").node
    assert isinstance(node, MapNode) and node.atomic


def test_required_fields_are_optional_for_the_decoder():
    spec = apps_v1.DeploymentSpec.model_validate({})  # the document requires selector and template
    assert spec.selector is None and spec.template is None
    assert core_v1.Container().to_dict() == {}


def test_hand_written_classes_are_reused_not_generated():
    assert apps_v1.Deployment.model_fields["metadata"].annotation == typing.Optional[runtime.models.ObjectMeta]
    assert core_v1.PodSpec.model_fields["image_pull_secrets"].annotation == typing.Optional[
        list[runtime.models.LocalObjectReference]]
    assert core_v1.ObjectReference is runtime.models.ObjectReference
    generated = {name for module in (core_v1, apps_v1, policy_v1) for name in module.__all__}
    assert not generated & {"ObjectMeta", "LabelSelector", "Namespace", "ConfigMap", "Secret", "ObjectReference",
                            "LocalObjectReference", "Condition"}


def test_names_are_snake_case_with_the_json_name_as_alias_where_camel_case_differs():
    assert python_name("podIPs") == ("pod_ips", "podIPs")
    assert python_name("targetCPUUtilizationPercentage") == ("target_cpu_utilization_percentage",
                                                             "targetCPUUtilizationPercentage")
    assert python_name("from") == ("from_", "from")
    assert python_name("restartPolicy") == ("restart_policy", None)
    rule = networking_v1.NetworkPolicyIngressRule.model_validate({"from": [{"podSelector": {}}]})
    assert rule.from_[0].pod_selector is not None and rule.to_dict() == {"from": [{"podSelector": {}}]}


def test_descriptions_are_the_first_sentence_of_kubernetes_own():
    assert first_sentence("Name of it, e.g. web.  More info:\n  https://x.io/a.b") == "Name of it, e.g. web."
    assert first_sentence("no full stop") == "no full stop"
    assert first_sentence("Required. Name of the thing. More.") == "Required. Name of the thing."
    assert core_v1.Pod.__doc__ == ("Pod is a collection of containers that can run on a host.")


def test_kinds_record_their_facts_from_the_documents_paths():
    assert KINDS["apps_v1.Deployment"] == ("apps/v1", "Deployment", "deployments", True)
    assert KINDS["core_v1.Node"] == ("v1", "Node", "nodes", False)
    assert KINDS["core_v1.Binding"] == ("v1", "Binding", "bindings", True)
    assert KINDS["autoscaling_v2.HorizontalPodAutoscaler"].api_version == "autoscaling/v2"
    # Served only as subresources (pods/eviction, */scale): no resource of their own.
    assert "policy_v1.Eviction" not in KINDS and "autoscaling_v1.Scale" not in KINDS


def _document(tmp_path: Path, schemas: dict) -> Path:
    (tmp_path / "apis__example.io__v1_openapi.json").write_text(json.dumps(
        {"openapi": "3.0.0", "paths": {}, "components": {"schemas": schemas}}))
    return tmp_path


def test_a_recursive_definition_is_generated_and_validates(tmp_path, monkeypatch):
    ref = {"$ref": "#/components/schemas/io.k8s.api.example.v1.Props"}
    source = _document(tmp_path, {
        "io.k8s.api.example.v1.Schema": {
            "description": "A schema.", "x-kubernetes-group-version-kind": [
                {"group": "example.io", "version": "v1", "kind": "Schema"}],
            "properties": {"root": {"allOf": [ref]}}, "type": "object"},
        "io.k8s.api.example.v1.Props": {  # as JSONSchemaProps: itself in a map, a list and a field
            "description": "Props.", "type": "object", "properties": {
                "type": {"type": "string"}, "items": {"allOf": [ref]},
                "properties": {"type": "object", "additionalProperties": ref},
                "allOf": {"type": "array", "items": ref}}}})
    source_text = render_module(plan(source, {"example.io/v1": ("Schema",)}), "example_v1")
    path = tmp_path / "example_v1.py"
    path.write_text(source_text)
    spec = importlib.util.spec_from_file_location("example_v1", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "example_v1", module)
    spec.loader.exec_module(module)
    obj = {"root": {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}},
                    "allOf": [{"type": "object"}]}}
    assert module.Schema.model_validate(obj).to_dict() == obj
    assert module.Schema.model_validate(obj).root.properties["a"].items.type == "string"


def test_importing_the_models_or_the_typed_client_loads_no_generated_module():
    script = "import sys, runtime.models, runtime.client.typed; print([m for m in sys.modules if 'models.k8s.' in m])"
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
