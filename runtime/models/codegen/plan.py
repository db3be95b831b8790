"""What the generator writes: which OpenAPI definitions become classes, in which module, and which are reused.

`plan(source)` reads the OpenAPI v3 documents kube-apiserver serves (one per
group-version, `v3/*_openapi.json`; their definitions agree where they
overlap), starts from the kinds `ROOTS` names (each with its List where there
is one), follows every `$ref` and gives back a `Plan`:

- each definition to generate, in the module of its group-version
  (`io.k8s.api.apps.v1.DeploymentSpec` -> `apps_v1`);
- definitions miniplane models by hand (`REUSED`: ObjectMeta, Namespace, ...)
  are imported, not generated; scalar definitions (`SCALARS`: Time, Quantity,
  IntOrString, ...) become annotations;
- each kind's facts for the typed client (`KindFacts`: apiVersion, kind,
  plural, scope), read from the documents' paths: the collection path
  `/apis/<group>/<version>/[namespaces/{namespace}/]<plural>` whose operations
  name the kind in `x-kubernetes-group-version-kind`. A kind served only as a
  subresource (Eviction, Scale) has no facts: it is no resource of its own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ROOTS", "REUSED", "SCALARS", "KindFacts", "Plan", "plan", "module_of", "class_of"]

#: The kinds to generate (apiVersion -> kinds): issue 38's workload kinds and issue 39's admission kinds.
ROOTS: dict[str, tuple[str, ...]] = {
    "v1": ("Pod", "Service", "Endpoints", "PersistentVolumeClaim", "PersistentVolume", "Node", "LimitRange",
           "ResourceQuota", "Binding"),
    "apps/v1": ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ControllerRevision"),
    "batch/v1": ("Job", "CronJob"),
    "networking.k8s.io/v1": ("Ingress", "IngressClass", "NetworkPolicy"),
    "policy/v1": ("PodDisruptionBudget", "Eviction"),
    "autoscaling/v1": ("HorizontalPodAutoscaler", "Scale"),
    "autoscaling/v2": ("HorizontalPodAutoscaler",),
    "discovery.k8s.io/v1": ("EndpointSlice",),
    "scheduling.k8s.io/v1": ("PriorityClass",),
    "storage.k8s.io/v1": ("StorageClass",),
    "admissionregistration.k8s.io/v1": ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
}

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_CORE = "io.k8s.api.core.v1."

#: Definitions miniplane models by hand: imported by the generated modules (definition -> module, class).
REUSED: dict[str, tuple[str, str]] = {
    **{_META + name: ("runtime.models.meta", name) for name in (
        "ObjectMeta", "ListMeta", "LabelSelector", "LabelSelectorRequirement", "OwnerReference",
        "ManagedFieldsEntry", "Condition", "Status", "StatusCause", "StatusDetails", "DeleteOptions",
        "Preconditions")},
    **{_CORE + name: ("runtime.models.core", name) for name in (
        "Namespace", "NamespaceList", "NamespaceSpec", "NamespaceStatus", "NamespaceCondition", "ServiceAccount",
        "ServiceAccountList", "ConfigMap", "ConfigMapList", "Secret", "SecretList", "LocalObjectReference")},
    **{_CORE + name: ("runtime.models.events", name) for name in (
        "ObjectReference", "Event", "EventList", "EventSource", "EventSeries")},
    **{"io.k8s.api.authentication.v1." + name: ("runtime.models.authentication", name) for name in (
        "BoundObjectReference", "TokenRequest", "TokenRequestSpec", "TokenRequestStatus")},
}

#: Definitions that are scalars in JSON (definition -> annotation, and the module it is imported from, if any).
SCALARS: dict[str, tuple[str, str]] = {
    _META + "Time": ("str", ""),
    _META + "MicroTime": ("str", ""),
    _META + "FieldsV1": ("dict[str, Any]", ""),
    "io.k8s.apimachinery.pkg.runtime.RawExtension": ("Any", ""),
    "io.k8s.apimachinery.pkg.api.resource.Quantity": ("Quantity", "runtime.models.scalars"),
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": ("IntOrString", "runtime.models.scalars"),
}

_REF = "#/components/schemas/"


@dataclass(frozen=True)
class KindFacts:
    """Where a kind is served: what the typed client needs to reach it."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool


@dataclass
class Plan:
    """The definitions to generate by module, and the facts of each root kind with a resource of its own."""

    definitions: dict[str, dict[str, Any]]
    #: module name (`apps_v1`) -> definition names to generate in it, sorted.
    modules: dict[str, list[str]] = field(default_factory=dict)
    #: definition name of a root kind -> its facts.
    kinds: dict[str, KindFacts] = field(default_factory=dict)


def module_of(definition: str) -> str:
    """The module of a generated definition: `io.k8s.api.apps.v1.X` -> `apps_v1`."""
    parts = definition.split(".")
    if parts[:3] != ["io", "k8s", "api"] or len(parts) != 6:
        raise ValueError(f"no module for {definition}: add it to REUSED or SCALARS")
    return f"{parts[3]}_{parts[4]}"


def class_of(definition: str) -> str:
    """The class name of a definition: its last part."""
    return definition.rsplit(".", 1)[1]


def refs(schema: Any) -> list[str]:
    """Every definition a schema refers to (`$ref`), anywhere inside it, in order."""
    if isinstance(schema, dict):
        found = [schema["$ref"].removeprefix(_REF)] if "$ref" in schema else []
        return found + [r for value in schema.values() for r in refs(value)]
    if isinstance(schema, list):
        return [r for value in schema for r in refs(value)]
    return []


def plan(source: Path, roots: dict[str, tuple[str, ...]] = ROOTS) -> Plan:
    """The plan for the documents in `source` (the `v3` folder) from the kinds `roots` names (apiVersion ->
    kinds). Raises ValueError for a root not found."""
    documents = [json.loads(p.read_text()) for p in sorted(source.glob("*_openapi.json"))]
    definitions: dict[str, dict[str, Any]] = {}
    for document in documents:
        definitions.update(document.get("components", {}).get("schemas", {}))
    by_gvk = {_gvk_key(gvk): name for name, schema in definitions.items()
              for gvk in schema.get("x-kubernetes-group-version-kind", [])}
    facts = _kind_facts(documents)
    result = Plan(definitions)
    todo: list[str] = []
    for api_version, kinds in roots.items():
        for kind in kinds:
            name = by_gvk.get((api_version, kind))
            if name is None:
                raise ValueError(f"no definition of {api_version} {kind}")
            todo.append(name)
            if (api_version, kind + "List") in by_gvk:
                todo.append(by_gvk[(api_version, kind + "List")])
            if (api_version, kind) in facts:
                result.kinds[name] = facts[(api_version, kind)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name in REUSED or name in SCALARS:
            continue
        seen.add(name)
        result.modules.setdefault(module_of(name), []).append(name)
        todo.extend(refs(definitions[name]))
    for names in result.modules.values():
        names.sort()
    result.modules = dict(sorted(result.modules.items()))
    return result


def _gvk_key(gvk: dict[str, str]) -> tuple[str, str]:
    api_version = f"{gvk['group']}/{gvk['version']}" if gvk.get("group") else gvk["version"]
    return api_version, gvk["kind"]


#: A collection path: /api/v1/[namespaces/{namespace}/]<plural> or /apis/<group>/<version>/[...]<plural>.
_COLLECTION = re.compile(r"^/apis?/(?:[^/]+/)?[^/]+/(namespaces/\{namespace\}/)?([a-z0-9]+)$")


def _kind_facts(documents: list[dict[str, Any]]) -> dict[tuple[str, str], KindFacts]:
    """(apiVersion, kind) -> facts, from the collection paths (a kind served both ways is namespaced)."""
    found: dict[tuple[str, str], KindFacts] = {}
    for document in documents:
        for path, item in document.get("paths", {}).items():
            match = _COLLECTION.match(path)
            if match is None or "/watch/" in path:
                continue
            for operation in item.values():
                gvk = operation.get("x-kubernetes-group-version-kind") if isinstance(operation, dict) else None
                if gvk is None:
                    continue
                api_version, kind = _gvk_key(gvk)
                namespaced = bool(match.group(1)) or (
                    (api_version, kind) in found and found[(api_version, kind)].namespaced)
                found[(api_version, kind)] = KindFacts(api_version, kind, match.group(2), namespaced)
    return found
