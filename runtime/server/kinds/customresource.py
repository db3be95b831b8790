"""Custom kinds: the kinds a CustomResourceDefinition defines, each a strategy built from the CRD at run time.

`CustomKinds(scheme)` follows the CRDs the watch cache holds: an
`Established` CRD's served versions are registered on the scheme (one
`ResourceType` per version, all stored under one key prefix
`/<group>/<plural>/`; conversion `None` rewrites apiVersion on the way out,
`Webhook` asks the CRD's webhook, which the registry awaits on reads and
writes (`runtime.server.kinds.conversionwebhook`)); a CRD that goes away takes them with it; a changed spec re-registers
them. While the CRD terminates its kinds are still served, but creates are
refused (405), as Kubernetes does.

`CustomResourceStrategy` is Kubernetes' `customresource` strategy: bodies are
decoded against the version's structural schema (unknown fields pruned,
warned about or refused by `fieldValidation`; defaults applied), validated by
it (types, formats, bounds, CEL rules, transition rules with `oldSelf`;
on update ratcheted as Kubernetes 1.33: errors on unchanged values are not
reported, a ratcheted CEL failure is a Warning),
`status` and `scale` subresources as the CRD enables them, printer columns
(JSONPath), selectable fields, no strategic merge patch (415) and no Protobuf.
ObjectMeta is checked by apimachinery's rules alone: a finalizer added without
a path that is not a standard one earns a Warning, not a 422.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jsonpath_ng.ext import parse as parse_jsonpath
from pydantic import ValidationError

from runtime.machinery import errors
from runtime.machinery.crds import CustomObject, is_custom, kinds_of
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.parts import FIELD_LABEL_NOT_SUPPORTED
from runtime.server.kinds.columns import NAME_COLUMN, Columns, age, column
from runtime.server.kinds.conversionwebhook import ConversionWebhook, RemoteConverter
from runtime.server.kinds.decoding import type_error_message
from runtime.server.kinds.subresources import StatusSubresource, Subresource, ViewSubresource
from runtime.models.meta import ObjectMeta
from runtime.machinery.storedobject import StoredObject
from runtime.machinery.options import Body
from runtime.machinery.patch.schema import schema_for
from runtime.server.schema import (
    Structural, apply_defaults, needs_defaults, prune, schema_node, structural_field_errors, validate,
)
from runtime.machinery.validation import FieldError, validate_object_meta
from runtime.machinery.validation.gofmt import go_value
from runtime.machinery.validation.names import finalizer_warnings

if TYPE_CHECKING:
    from runtime.machinery.scheme import ResourceType, Scheme

__all__ = ["CustomKinds", "CustomResourceStrategy", "CustomDefinition", "CustomObject", "schema_errors", "is_custom",
           "kinds_of", "ScaleSubresource"]

_CREATED = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is "
            "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
            "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
            "Null for lists. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
#: The column a CRD without printer columns gets (apiextensions' default).
_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": _CREATED}


def schema_errors(schema: dict[str, Any], path: str) -> list[FieldError]:
    """The structural-schema rules a CRD version's schema breaks, as field errors under `path`."""
    return structural_field_errors(schema, path=path)


def jsonpath(expression: str) -> Any:
    """A Kubernetes JSONPath (`.spec.replicas`, `{.status.conditions[?(@.type=="Ready")].status}`), compiled."""
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    return parse_jsonpath("$" + text if text.startswith(".") or text.startswith("[") else "$." + text)


def values_at(compiled: Any, obj: dict[str, Any]) -> list[Any]:
    return [m.value for m in compiled.find(obj)]


@dataclass
class CustomDefinition:
    """What every version's strategy of one CRD shares, kept current as the CRD changes."""

    crd: dict[str, Any]
    terminating: bool = False


@dataclass
class _Served:
    signature: str
    types: list["ResourceType"] = field(default_factory=list)
    definition: CustomDefinition | None = None


class CustomKinds:
    """The custom kinds a scheme serves, following the CRDs (see the module doc)."""

    def __init__(self, scheme: "Scheme") -> None:
        self.scheme = scheme
        self._served: dict[str, _Served] = {}

    def follow(self, crd: dict[str, Any]) -> None:
        """Serve what `crd` defines now (nothing unless Established)."""
        name = crd["metadata"]["name"]
        established = any(c.get("type") == "Established" and c.get("status") == "True"
                          for c in (crd.get("status") or {}).get("conditions") or [])
        if not established:
            self.forget(name)
            return
        accepted = (crd.get("status") or {}).get("acceptedNames") or {}
        signature = json.dumps([crd.get("spec"), accepted], sort_keys=True)
        served = self._served.get(name)
        if served is None or served.signature != signature:
            self.forget(name)
            served = self._served[name] = _Served(signature, definition=CustomDefinition(crd))
            for info, version in kinds_of(crd):
                try:
                    served.types.append(self.scheme.register(info, _factory(served.definition, version)))
                except ValueError:
                    continue  # a name another kind serves: the naming controller refuses it in status
        served.definition.crd = crd
        served.definition.terminating = bool(crd["metadata"].get("deletionTimestamp"))

    def retain(self, names: set[str]) -> None:
        """Forget every CRD but `names` (after a relist)."""
        for name in set(self._served) - names:
            self.forget(name)

    def forget(self, name: str) -> None:
        """Stop serving the kinds of CRD `name`."""
        served = self._served.pop(name, None)
        for rt in served.types if served else ():
            self.scheme.unregister(rt)


def _factory(definition: CustomDefinition, version: dict[str, Any]):
    def make(scheme: "Scheme", rt: "ResourceType") -> "CustomResourceStrategy":
        return CustomResourceStrategy(scheme, rt, definition, version)
    return make


class CustomResourceStrategy(Strategy, RemoteConverter):
    """One served version of a custom kind (see the module doc)."""

    name_rule = "dns-subdomain"
    kube_finalizers = False  # a finalizer without a domain is only a warning here (see `warnings`)
    supports_strategic_merge = False
    counts_generation = True  # all but metadata (and status with its subresource), as Kubernetes'

    def __init__(self, scheme: "Scheme", rt: "ResourceType", definition: CustomDefinition,
                 version: dict[str, Any]) -> None:
        super().__init__(scheme, rt)
        self.definition = definition
        self.version = version
        self.structural = Structural.from_openapi((version.get("schema") or {}).get("openAPIV3Schema") or {})
        sub = version.get("subresources") or {}
        self.subresources = {**({"status": StatusSubresource()} if sub.get("status") is not None else {}),
                             **({"scale": ScaleSubresource(sub["scale"])} if sub.get("scale") is not None else {})}
        self._merge_schema = schema_node(self.structural, metadata=schema_for(ObjectMeta), name=rt.kind)
        self.openapi_schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
        selectable = [s.get("jsonPath", "") for s in version.get("selectableFields") or []]
        self._selectable = {path.lstrip("."): jsonpath(path) for path in selectable if path}
        # kube's crConverter.ConvertFieldLabel: metadata.namespace only for a namespaced kind.
        scope = ("metadata.name", "metadata.namespace") if rt.namespaced else ("metadata.name",)
        self.field_labels = (*scope, *self._selectable)
        self.field_label_error = FIELD_LABEL_NOT_SUPPORTED  # the custom resource converter's ConvertFieldLabel
        self.columns = _columns(version.get("additionalPrinterColumns") or [_AGE])
        storage = next((v.get("name") for v in (definition.crd.get("spec") or {}).get("versions") or []
                        if v.get("storage")), rt.version)
        #: Every version is stored as the storage version; conversion `None` rewrites apiVersion only.
        self.storage_api_version = f"{rt.group}/{storage}"
        self._defaults = any(node.has_default for node in self.structural.walk())
        #: The CEL failures the last update validated ratcheted (its new object, their Warning texts).
        self._ratcheted: tuple[Any, list[str]] = (None, [])
        #: The CRD's conversion webhook (None: conversion `None`, apiVersion rewritten in place).
        self.conversion_webhook = ConversionWebhook.of(definition.crd)
        names = (definition.crd.get("status") or {}).get("acceptedNames") or (definition.crd.get("spec") or
                                                                              {}).get("names") or {}
        self._list_kind = names.get("listKind") or f"{rt.kind}List"
        #: Reads change objects: another version is shown, or defaults apply to what was stored before them
        #: (with a webhook, any stored version may differ from this one).
        self.converts = self.storage_api_version != rt.api_version or self._defaults or self.converts_remotely

    @property
    def converts_remotely(self) -> bool:
        return self.conversion_webhook is not None

    def present(self, obj: StoredObject) -> StoredObject:
        """The stored object as this version shows it: its apiVersion, and the schema's defaults (Kubernetes
        defaults on every decode from storage, so a default added to the schema later shows on read).

        With a conversion webhook, an object of another version is left as it is: converting it calls out,
        which the registry awaits first (`to_version`) where a read or a write needs this version."""
        data = obj.obj
        if data.get("kind") != self.rt.kind:
            return obj  # another kind's view of it (a Scale)
        if self.converts_remotely and data.get("apiVersion") != self.rt.api_version:
            return obj
        defaulted = self._defaults and needs_defaults(data, self.structural)
        if data.get("apiVersion") == self.rt.api_version and not defaulted:
            return obj
        shown = apply_defaults(data, self.structural) if defaulted else dict(data)
        shown["apiVersion"] = self.rt.api_version
        return StoredObject(obj.key, shown, obj.revision)

    async def to_version(self, client: Any, objs: list[StoredObject], *, listed: bool = False) -> list[StoredObject]:
        """`objs` (stored ones) in this version, converted by the webhook in one review, then defaulted."""
        wanted = [o.obj for o in objs]
        converted = await self.conversion_webhook.convert(  # type: ignore[union-attr]
            client, wanted, self.rt.api_version, kind=self._list_kind if listed else self.rt.kind)
        return [self.present(o if new is o.obj else StoredObject(o.key, new, o.revision))
                for o, new in zip(objs, converted)]

    async def to_storage(self, client: Any, obj: dict[str, Any]) -> dict[str, Any]:
        """`obj` (of this version) in the storage version, converted by the webhook."""
        [stored] = await self.conversion_webhook.convert(  # type: ignore[union-attr]
            client, [obj], self.storage_api_version, kind=self.rt.kind)
        return stored

    def _to_storage(self, obj: dict[str, Any]) -> None:
        if not self.converts_remotely:  # a webhook converts on the way to the store (the registry's)
            obj["apiVersion"] = self.storage_api_version

    @property
    def merge_schema(self) -> Any:
        return self._merge_schema

    # ---- decoding ------------------------------------------------------------------------------------

    def decode(self, body: Body, field_validation: str,
               extra_problems: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
        rt, data = self.rt, body.data
        prefix = f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}'
        if not isinstance(data, dict):
            raise errors.BadRequest(f"{prefix}: json: cannot unmarshal {type(data).__name__} into Go value of type "
                                    "map[string]interface {}")
        for key, expected in (("apiVersion", rt.api_version), ("kind", rt.kind)):
            if data.get(key) not in (None, "") and data[key] != expected:
                word = "API version" if key == "apiVersion" else "kind"
                raise errors.BadRequest(f"the {word} in the data ({data[key]}) does not match the expected "
                                        f"{word} ({expected})")
        try:
            meta = ObjectMeta.model_validate(data.get("metadata") or {}).to_dict()
        except ValidationError as exc:
            raise errors.BadRequest(f"{prefix}: {type_error_message(ObjectMeta, exc.errors()[0])}") from None
        obj, pruned = prune(dict(data, metadata=meta), self.structural)
        problems = [*extra_problems, *(f'unknown field "{p}"' for p in pruned),
                    *(f'duplicate field "{p}"' for p in body.duplicates)]
        if problems and field_validation == "Strict":
            raise errors.BadRequest(f"{prefix}: strict decoding error: " + ", ".join(problems))
        obj = apply_defaults(obj, self.structural)
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        return obj, problems if field_validation == "Warn" else []

    # ---- writes --------------------------------------------------------------------------------------

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        if self.definition.terminating:
            # Kubernetes' NewMethodNotSupported with its message replaced: details name group and resource.
            raise errors.MethodNotAllowed("create not allowed while custom resource definition is terminating",
                                          group=self.rt.group, kind=self.rt.plural)
        super().prepare_for_create(obj)
        self._to_storage(obj)
        if self.status_subresource:
            obj.pop("status", None)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        if self._defaults and needs_defaults(old, self.structural):
            old = apply_defaults(old, self.structural)  # as read: a default added later is no spec change
        super().prepare_for_update(new, old, subresource)
        self._to_storage(new)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        return validate(obj, self.structural)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        meta = validate_object_meta(new.get("metadata") or {}, namespaced=self.rt.namespaced, name_rule=self.name_rule,
                                    kube_finalizers=self.kube_finalizers)
        ratcheted: list[str] = []
        errs = meta + validate(new, self.structural, old=old, warnings=ratcheted)
        # The registry asks `warnings(old, new)` right after, with no await between: one slot, by identity.
        self._ratcheted = (new, ratcheted)
        return errs

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        added = finalizer_warnings(new["metadata"].get("finalizers") or [],
                                   old["metadata"].get("finalizers") if old else None)
        ratcheted, self._ratcheted = (self._ratcheted[1] if self._ratcheted[0] is new else []), (None, [])
        return self.deprecation() + ratcheted + added

    def deprecation(self) -> list[str]:
        """The Warning every request to a deprecated version carries."""
        if not self.version.get("deprecated"):
            return []
        return [self.version.get("deprecationWarning")
                or f"{self.rt.api_version} {self.rt.kind} is deprecated"]

    # ---- reads ---------------------------------------------------------------------------------------

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        fields = super().selectable_fields(obj)
        for name, compiled in self._selectable.items():
            found = values_at(compiled, obj)
            fields[name] = _field_text(found[0]) if found else ""
        return fields


class ScaleSubresource(ViewSubresource):
    """A custom kind's `scale` subresource: an autoscaling/v1 Scale view of the object, as Kubernetes'
    ScaleREST for custom resources; `scale` is the CRD version's `subresources.scale`."""

    name = "scale"
    kind = ("autoscaling", "v1", "Scale")

    def __init__(self, scale: dict[str, Any]) -> None:
        self.scale = scale

    def view(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The object's Scale: its spec and status replicas, and its label selector, at the CRD's paths."""
        meta = obj["metadata"]
        scale: dict[str, Any] = {
            "kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {}, "status": {"replicas": 0}}
        replicas = values_at(jsonpath(self.scale.get("specReplicasPath", ".spec.replicas")), obj)
        if replicas and isinstance(replicas[0], int):
            scale["spec"]["replicas"] = replicas[0]
        observed = values_at(jsonpath(self.scale.get("statusReplicasPath", ".status.replicas")), obj)
        if observed and isinstance(observed[0], int):
            scale["status"]["replicas"] = observed[0]
        if self.scale.get("labelSelectorPath"):
            selector = values_at(jsonpath(self.scale["labelSelectorPath"]), obj)
            if selector and isinstance(selector[0], str):
                scale["status"]["selector"] = selector[0]
        return scale

    def from_view(self, view: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
        """The object a written Scale makes of `current` (only the spec's replicas change)."""
        replicas = (view.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            name = current["metadata"].get("name", "")
            raise errors.Invalid(f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: '
                                 f"{go_value(replicas, decoded=True)}: must be greater than or equal to 0",
                                 name=name, group="autoscaling", kind="Scale",
                                 causes=[errors.Cause("FieldValueInvalid", "must be greater than or equal to 0",
                                                      "spec.replicas")])
        path = self.scale.get("specReplicasPath", ".spec.replicas").lstrip(".").split(".")
        node = current
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = replicas
        wanted_rv = (view.get("metadata") or {}).get("resourceVersion")
        if wanted_rv:
            current["metadata"]["resourceVersion"] = wanted_rv
        return current


def _field_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _columns(definitions: list[dict[str, Any]]) -> Columns:
    compiled = [jsonpath(d.get("jsonPath", "")) for d in definitions]
    header = (NAME_COLUMN, *(column(d.get("name", ""), d.get("description", ""), type_=d.get("type", "string"),
                                    format_=d.get("format", ""), priority=int(d.get("priority") or 0))
                             for d in definitions))
    types = [d.get("type", "string") for d in definitions]

    def cells(obj: dict[str, Any]) -> list[Any]:
        row: list[Any] = [obj["metadata"].get("name", "")]
        for path, kind in zip(compiled, types):
            found = values_at(path, obj)
            # Kubernetes' tableconvertor takes the first result only.
            row.append(_cell(found[0], kind) if found and found[0] is not None else None)
        return row
    return Columns(header, cells)


def _cell(value: Any, kind: str) -> Any:
    """One cell as Kubernetes' tableconvertor makes it (`cellForJSONValue`): a string column prints any value
    as text, a date column is an age (`5m`), a value of another type than its column's is no cell (None)."""
    if kind == "string":
        return value if isinstance(value, str) else json.dumps(value, separators=(",", ":")) \
            if isinstance(value, (dict, list)) else _field_text(value)
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        try:
            return age(value)
        except ValueError:
            return "<invalid>"
    return None
