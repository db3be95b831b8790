"""OpenAPI documents: `/openapi/v3` (the index), one v3 document per group-version, and `/openapi/v2`.

Pure builders from a `Scheme`. Each group-version document is an OpenAPI
3.0.0 document shaped as the Kubernetes API server's, because kubectl reads it:

- `create -f`/`replace -f` look for a PATCH operation whose
  `x-kubernetes-group-version-kind` (one object) names the kind and whose
  own parameters include `fieldValidation`; found, validation is left to
  the server.
- `apply` needs `application/strategic-merge-patch+json` on that PATCH, then
  walks the kind's schema (the one in `components.schemas` whose
  `x-kubernetes-group-version-kind` list holds the kind), following
  `allOf[0]`/`$ref` and reading `x-kubernetes-patch-*` markers.
- `explain` finds the kind from the operations of
  `/apis/GROUP/VERSION/RESOURCE` and prints the schema's properties,
  descriptions and `required`.

Schemas come from the pydantic models (`runtime.models`): Optional fields
become plain typed properties, nested models `$ref`s named as Kubernetes
names them (`io.k8s.api.rbac.v1.PolicyRule`, whatever the domain: the GVK
extensions carry the served group), list/map/patch markers from the fields'
`json_schema_extra`, required fields from the spec's tables (`REQUIRED`).
Descriptions come from the models, else from Kubernetes' own documentation
of the same types, so `kubectl explain` prints one for every field. These
tables (required fields, descriptions, query parameters) are data, in
`openapi_descriptions.yaml` beside this module, read once at import.

`/openapi/v2` (Swagger 2.0) holds the same schemas under `definitions`, in
JSON or in gnostic's Protobuf (`openapi_v2_protobuf`), which kubectl asks
for when v3 cannot answer (see `openapi_v2_document`). Served bytes are
identified by `content_etag` (sha512) for `ETag`/`If-None-Match`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import types as pytypes
import typing
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from runtime import models
from runtime.machinery.serializer.proto import openapi_v2_pb2 as pb
from runtime.models.base import field_extensions
from runtime.models.scalars import IntOrString, Quantity
from runtime.machinery.options import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from runtime.machinery.scheme import ResourceType, Scheme

__all__ = [
    "REQUIRED", "schema_name", "openapi_v3_path",
    "openapi_v3_document", "openapi_v3_document_bytes", "openapi_v3_hash", "openapi_v3_index",
    "openapi_v2_document", "openapi_v2_json", "openapi_v2_protobuf", "content_etag",
    "V2_PROTOBUF_ACCEPT", "V2_PROTOBUF_CONTENT_TYPE",
]

_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_PACKAGES = {"meta": _META, "rbac": "io.k8s.api.rbac.v1", "core": "io.k8s.api.core.v1",
             "events": "io.k8s.api.events.v1",
             "authorization": "io.k8s.api.authorization.v1",
             "authentication": "io.k8s.api.authentication.v1", "coordination": "io.k8s.api.coordination.v1",
             "apiextensions": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
             "insight": "io.miniplane.insight.v1"}
_RENAMES = {"UserInfoModel": "UserInfo"}
# Kubernetes' scalars with JSON rules of their own, as its OpenAPI writes them inline.
_UNION_SCALARS = (
    (Quantity, {"type": "string", "x-kubernetes-int-or-string": True}),
    (IntOrString, {"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string": True}),
)

# libyaml's loader where PyYAML has it: a tenth of the pure-Python one's 30 ms, at every start.
_DATA: dict[str, Any] = yaml.load(Path(__file__).with_name("openapi_descriptions.yaml").read_text("utf-8"),
                                  Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

REQUIRED: dict[type[BaseModel], tuple[str, ...]] = {
    getattr(models, name): tuple(fields) for name, fields in _DATA["required"].items()}
"""Fields the spec's tables mark required (JSON names). The models keep every
field optional so that a missing one is a 422 from validation, not a 400."""
_DESCRIPTIONS: dict[type[BaseModel], str] = {
    getattr(models, name): text for name, text in _DATA["model_descriptions"].items()}
_FIELD_DESCRIPTIONS: dict[str, str] = _DATA["kind_field_descriptions"]
_DOCS: dict[str, str] = _DATA["kubernetes_docs"]  # Kubernetes' own SwaggerDoc, by `Type` or `Type.field`
_OBJECT_META: str = _DATA["object_metadata"]
_LIST_META: str = _DATA["list_metadata"]
_PATCH_SCHEMA: dict[str, str] = _DATA["patch_schema"]
_FORMATS = {"creationTimestamp", "deletionTimestamp", "lastTransitionTime", "time", "acquireTime", "renewTime"}


def schema_name(model: type[BaseModel]) -> str:
    """Return the Kubernetes-style schema name of a model, e.g. `io.k8s.api.rbac.v1.ClusterRole`."""
    module = model.__module__.rsplit(".", 1)[-1]
    # A generated module is named after its group and version (`apps_v1`: io.k8s.api.apps.v1).
    package = _PACKAGES.get(module) or f"io.k8s.api.{module.replace('_', '.')}"
    return f"{package}.{_RENAMES.get(model.__name__, model.__name__)}"


def _ref(model: type[BaseModel]) -> dict[str, Any]:
    return {"$ref": _REF + schema_name(model)}


def _custom_name(t: ResourceType, kind: str) -> str:
    """A custom kind's schema name, as Kubernetes publishes it: the group reversed (`com.example.v1.Widget`)."""
    return ".".join([*reversed(t.group.split(".")), t.version, kind])


def _kind_ref(t: ResourceType, *, listed: bool = False) -> dict[str, Any]:
    """The schema of a kind's objects (or lists): its model's, or a custom kind's own."""
    if t.strategy.openapi_schema is not None:
        return {"$ref": _REF + _custom_name(t, t.list_kind if listed else t.kind)}
    return _ref(t.info.list_model if listed else t.model)


def _custom_schemas(t: ResourceType) -> dict[str, dict[str, Any]]:
    """A custom kind's schema and its list's, as Kubernetes builds them from the CRD."""
    schema = dict(t.strategy.openapi_schema or {"type": "object"})
    properties = dict(schema.get("properties") or {})
    properties["apiVersion"] = {"type": "string", "description": _FIELD_DESCRIPTIONS.get("apiVersion", "")}
    properties["kind"] = {"type": "string", "description": _FIELD_DESCRIPTIONS.get("kind", "")}
    properties["metadata"] = {"allOf": [_ref(models.ObjectMeta)], "description": _OBJECT_META}
    schema.update(type="object", properties=properties,
                  **{"x-kubernetes-group-version-kind": [{"group": t.group, "kind": t.kind, "version": t.version}]})
    listed = {"type": "object", "description": f"{t.list_kind} is a list of {t.kind}", "required": ["items"],
              "properties": {"apiVersion": properties["apiVersion"], "kind": properties["kind"],
                             "items": {"type": "array", "items": _kind_ref(t)},
                             "metadata": {"allOf": [_ref(models.ListMeta)], "description": _LIST_META}},
              "x-kubernetes-group-version-kind": [{"group": t.group, "kind": t.list_kind, "version": t.version}]}
    return {_custom_name(t, t.kind): schema, _custom_name(t, t.list_kind): listed}


class _Schemas:
    """Accumulates `components.schemas` while walking model annotations."""

    def __init__(self, gvks: dict[type[BaseModel], list[dict[str, str]]]) -> None:
        self.gvks = gvks
        self.schemas: dict[str, dict[str, Any]] = {}

    def add(self, model: type[BaseModel]) -> dict[str, Any]:
        name = schema_name(model)
        if name in self.schemas:
            return _ref(model)
        schema: dict[str, Any] = {"type": "object"}
        self.schemas[name] = schema  # registered first: models may nest themselves
        description = (model.__dict__.get("__doc__") or _DESCRIPTIONS.get(model)
                       or _DOCS.get(_RENAMES.get(model.__name__, model.__name__)) or self._list_doc(model))
        if description:
            schema["description"] = re.sub(r"\n\s*", " ", description.strip())  # a docstring's line breaks
        schema["properties"] = {(info.alias or field): self._field(model, field, info.alias or field)
                                for field, info in model.model_fields.items()}
        if model in REQUIRED:
            schema["required"] = list(REQUIRED[model])
        if model in self.gvks:
            schema["x-kubernetes-group-version-kind"] = self.gvks[model]
        return _ref(model)

    def _list_doc(self, model: type[BaseModel]) -> str:
        """Kubernetes' wording for a list kind without a description of its own ("" if not a list kind)."""
        kind = self.gvks.get(model, [{}])[0].get("kind", "")
        return f"{kind} is a list of {kind.removesuffix('List')} objects." if kind.endswith("List") else ""

    def _field(self, model: type[BaseModel], field: str, json_name: str) -> dict[str, Any]:
        info = model.model_fields[field]
        schema = self.of(info.annotation)
        description = info.description
        if model in self.gvks:  # the standard top-level fields; `kind` in a RoleRef means something else
            description = description or _FIELD_DESCRIPTIONS.get(json_name)
        description = description or _DOCS.get(f"{_RENAMES.get(model.__name__, model.__name__)}.{json_name}")
        if json_name == "items" and not description and self._list_doc(model):
            description = f"Items is the list of {self.gvks[model][0]['kind'].removesuffix('List')} objects."
        if json_name == "metadata" and not description:
            description = _LIST_META if schema.get("$ref", "").endswith(".ListMeta") else _OBJECT_META
        if "$ref" in schema and description:
            schema = {"allOf": [schema]}  # siblings of $ref are ignored in OpenAPI 3.0
        if description:
            schema["description"] = description
        if json_name in _FORMATS and schema.get("type") == "string":
            schema["format"] = "date-time"
        schema.update(field_extensions(model, field))
        return schema

    def of(self, annotation: Any) -> dict[str, Any]:
        """The schema of one annotation; Optional[X] is X (Kubernetes omits, never nulls)."""
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin in (typing.Union, pytypes.UnionType):
            inner_args = tuple(a for a in args if a is not type(None))
            for scalar, schema in _UNION_SCALARS:
                if inner_args == typing.get_args(scalar):
                    return dict(schema)
            (inner,) = inner_args
            return self.of(inner)
        if origin is list:
            return {"type": "array", "items": self.of(args[0])}
        if origin is dict:
            if args[1] is Any:
                return {"type": "object"}
            return {"type": "object", "additionalProperties": self.of(args[1])}
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self.add(annotation)
        scalars = {str: {"type": "string"}, models.Base64: {"type": "string", "format": "byte"},
                   bool: {"type": "boolean"}, int: {"type": "integer", "format": "int64"},
                   float: {"type": "number", "format": "double"}}
        if annotation in scalars:
            return dict(scalars[annotation])
        if annotation is Any:
            return {}
        raise TypeError(f"no OpenAPI schema for annotation {annotation!r}")


def _protobuf_media_type(domain: str) -> str:
    """Return the Protobuf media type under a domain: `application/vnd.kubernetes.protobuf` for k8s.io."""
    name = "kubernetes" if domain == "k8s.io" else domain.split(".")[0]
    return f"application/vnd.{name}.protobuf"


def openapi_v3_path(group_version: str) -> str:
    """Return the index key of a group-version: `api/v1` for core, `apis/GROUP/v1` otherwise."""
    return f"apis/{group_version}" if "/" in group_version else f"api/{group_version}"


def _param(name: str, where: str, type_: str, description: str) -> dict[str, Any]:
    param = {"name": name, "in": where, "description": description, "schema": {"type": type_}}
    if where == "path":
        param["required"] = True
    return param


_Q = {name: _param(name, "query", p["type"], p["description"]) for name, p in _DATA["query_parameters"].items()}
_LIST = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
         "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_DELETE = ("dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
           "orphanDependents", "propagationPolicy")
_DELETECOLLECTION = ("continue", "dryRun", "fieldSelector", "gracePeriodSeconds",
                     "ignoreStoreReadErrorWithClusterBreakingPotential", "labelSelector", "limit",
                     "orphanDependents", "propagationPolicy", "resourceVersion", "resourceVersionMatch",
                     "sendInitialEvents", "timeoutSeconds")
#: The patch media types the documents list (Kubernetes' OpenAPI lists these four; custom kinds all but the
#: strategic merge patch).
_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)
_WATCH_MEDIA = ("application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
_CODES = {"200": "OK", "201": "Created", "202": "Accepted"}
_VERBS = {"get": "read", "list": "list", "post": "create", "put": "replace", "patch": "patch",
          "delete": "delete", "deletecollection": "delete"}


class _Paths:
    """Builds the `paths` of one group-version, an operation per served verb."""

    def __init__(self, scheme: Scheme) -> None:
        self.media = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
        if (own := _protobuf_media_type(scheme.domain)) not in self.media:
            self.media.append(own)
        self.paths: dict[str, dict[str, Any]] = {}

    def _content(self, schema: dict[str, Any], types: Sequence[str] | None = None) -> dict[str, Any]:
        return {t: {"schema": schema} for t in (types or self.media)}

    def _op(self, t: ResourceType, action: str, op_id: str, params: tuple[str, ...],
            ok: dict[str, Any], codes: tuple[str, ...], body: dict[str, Any] | None = None,
            gvk: dict[str, str] | None = None) -> dict[str, Any]:
        # Named after the group without the domain, as kube's (`AppsV1`, `RbacAuthorizationV1`); an absolute
        # group (apps, a custom kind's) whole.
        group = (t.info.group if t.info.group is not None else t.info.group_prefix) or "core"
        group_token = "".join(p.capitalize() for p in group.split("."))
        op: dict[str, Any] = {
            "description": f"{_VERBS[action]} {t.kind}",
            "operationId": f"{_VERBS[action]}{group_token}{t.version.capitalize()}{op_id}",
            "tags": [f"{group}_{t.version}"],
            "parameters": [_Q[p] for p in params],
            "responses": {**{c: {"description": _CODES[c], "content": ok} for c in codes},
                          "401": {"description": "Unauthorized"}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk or {"group": t.group, "version": t.version, "kind": t.kind},
        }
        if body is not None:
            op["requestBody"] = body
        return op

    def _path(self, path: str, params: list[dict[str, Any]], ops: dict[str, Any]) -> None:
        if ops:
            self.paths[path] = {**ops, "parameters": [*params, _Q["pretty"]]}

    def _item(self, t: ResourceType, verbs: Iterable[str], op_id: str) -> dict[str, Any]:
        """Operations on one object (or one of its subresources): get, update, patch, delete."""
        obj = self._content(_kind_ref(t))
        status = self._content(_ref(models.Status))
        ops: dict[str, Any] = {}
        if "get" in verbs:
            ops["get"] = self._op(t, "get", op_id, (), obj, ("200",))
        if "update" in verbs:
            ops["put"] = self._op(t, "put", op_id, _WRITE, obj, ("200", "201"), {"content": obj, "required": True})
        if "patch" in verbs:
            # kubectl's client-side apply sends a strategic merge patch when PATCH lists it: only where served.
            patch_types = [p for p in _PATCH_TYPES
                           if p != STRATEGIC_MERGE_PATCH or t.strategy.supports_strategic_merge]
            body = {"content": self._content(_ref_patch(), patch_types), "required": True}
            ops["patch"] = self._op(t, "patch", op_id, _WRITE + ("force",), obj, ("200", "201"), body)
        if "delete" in verbs:
            body = {"content": self._content(_ref(models.DeleteOptions))}
            ops["delete"] = self._op(t, "delete", op_id, _DELETE, status, ("200", "202"), body)
        return ops

    def add(self, t: ResourceType) -> None:
        verbs = set(t.info.verbs)
        prefix = f"/apis/{t.group}/{t.version}" if t.group else f"/api/{t.version}"
        scope = "Namespaced" if t.namespaced else ""
        collection = f"{prefix}/namespaces/{{namespace}}/{t.plural}" if t.namespaced else f"{prefix}/{t.plural}"
        ns_param = [_param("namespace", "path", "string", "object name and auth scope")] if t.namespaced else []
        name_param = [_param("name", "path", "string", f"name of the {t.kind}")]
        obj = self._content(_kind_ref(t))
        listed = (self._content(_kind_ref(t, listed=True), [*self.media, *_WATCH_MEDIA])
                  if t.info.list_model or t.strategy.openapi_schema is not None else obj)

        ops: dict[str, Any] = {}
        if "list" in verbs:  # watch is the list operation with watch=true
            ops["get"] = self._op(t, "list", scope + t.kind, _LIST, listed, ("200",))
        if "create" in verbs:
            ops["post"] = self._op(t, "post", scope + t.kind, _WRITE, obj, ("200", "201", "202"),
                                   {"content": obj, "required": True})
        if "deletecollection" in verbs:
            ops["delete"] = self._op(t, "deletecollection", "Collection" + scope + t.kind, _DELETECOLLECTION,
                                     self._content(_ref(models.Status)), ("200",),
                                     {"content": self._content(_ref(models.DeleteOptions))})
        self._path(collection, ns_param, ops)
        if t.namespaced and "list" in verbs:
            self._path(f"{prefix}/{t.plural}", [], {
                "get": self._op(t, "list", t.kind + "ForAllNamespaces", _LIST, listed, ("200",))})
        self._path(f"{collection}/{{name}}", ns_param + name_param, self._item(t, verbs, scope + t.kind))
        for sub, sub_verbs in t.info.subresources:
            ops = self._item(t, sub_verbs, scope + t.kind + sub.capitalize())
            found = t.strategy.subresources.get(sub)
            other, model = (found.kind, found.model) if found is not None else (None, None)
            if "create" in sub_verbs and other is not None and model is not None:
                # A subresource one POSTs another kind to (a ServiceAccount's token: a TokenRequest).
                content = self._content(_ref(model))
                ops["post"] = self._op(t, "post", scope + t.kind + sub.capitalize(), _WRITE, content,
                                       ("200", "201", "202"), {"content": content, "required": True},
                                       gvk={"group": other[0], "version": other[1], "kind": other[2]})
            self._path(f"{collection}/{{name}}/{sub}", ns_param + name_param, ops)


def _ref_patch() -> dict[str, Any]:
    return {"$ref": f"{_REF}{_META}.Patch"}


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"].removeprefix(_REF)
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _gvks(scheme: Scheme) -> dict[type[BaseModel], list[dict[str, str]]]:
    """The `x-kubernetes-group-version-kind` of every model that is a kind (DeleteOptions: in every group)."""
    gvks: dict[type[BaseModel], list[dict[str, str]]] = {}
    for t in scheme.types:
        if t.strategy.openapi_schema is not None:
            continue  # a custom kind's schema carries its own
        gvks[t.model] = [{"group": t.group, "kind": t.kind, "version": t.version}]
        if t.info.list_model is not None:
            gvks[t.info.list_model] = [{"group": t.group, "kind": t.list_kind, "version": t.version}]
        for sub, _ in t.info.subresources:
            found = t.strategy.subresources.get(sub)
            other, model = (found.kind, found.model) if found is not None else (None, None)
            if other is not None and model is not None:
                gvks[model] = [{"group": other[0], "kind": other[2], "version": other[1]}]
    groups = dict.fromkeys(["", *(g for g, _ in scheme.groups())])
    gvks[models.DeleteOptions] = [{"group": g, "kind": "DeleteOptions", "version": "v1"} for g in groups]
    gvks[models.Status] = [{"group": "", "kind": "Status", "version": "v1"}]
    return gvks


def openapi_v3_document(scheme: Scheme, group_version: str) -> dict[str, Any] | None:
    """Return the OpenAPI v3 document of one group-version (`v1` or `GROUP/v1`), or None if not served.

    `components.schemas` holds exactly the schemas the paths reach: each
    kind, its List, every nested type, and DeleteOptions/Status/Patch where
    an operation uses them.
    """
    group, _, version = group_version.rpartition("/")
    served = [t for t in scheme.types if t.group == group and t.version == version]
    if not served:
        return None
    pool = _Schemas(_gvks(scheme))
    typed = [t for t in served if t.strategy.openapi_schema is None]
    subresource_models = [m for t in typed for sub, _ in t.info.subresources
                          if (m := getattr(t.strategy.subresources.get(sub), "model", None)) is not None]
    for model in (*(t.model for t in typed), *(t.info.list_model for t in typed if t.info.list_model),
                  *subresource_models, models.DeleteOptions, models.Status, models.ObjectMeta, models.ListMeta):
        pool.add(model)
    for t in served:
        if t.strategy.openapi_schema is not None:
            pool.schemas.update(_custom_schemas(t))
    pool.schemas[f"{_META}.Patch"] = dict(_PATCH_SCHEMA)

    paths = _Paths(scheme)
    for t in served:
        paths.add(t)
    reachable: set[str] = set()
    pending = list(_refs(paths.paths))
    while pending:
        name = pending.pop()
        if name not in reachable:
            reachable.add(name)
            pending.extend(_refs(pool.schemas[name]))
    return {
        "openapi": "3.0.0",
        "info": {"title": "miniplane", "version": version},
        "paths": paths.paths,
        "components": {"schemas": {n: s for n, s in sorted(pool.schemas.items()) if n in reachable}},
    }


def openapi_v3_document_bytes(scheme: Scheme, group_version: str) -> bytes | None:
    """Return the document as the compact, key-sorted JSON served (and hashed); None if not served.

    Cached per (scheme, its generation, group_version): the bytes change only when kinds come or go.
    """
    return _v3_bytes(scheme, scheme.generation, group_version)


@functools.lru_cache(maxsize=64)
def _v3_bytes(scheme: Scheme, generation: int, group_version: str) -> bytes | None:
    doc = openapi_v3_document(scheme, group_version)
    if doc is None:
        return None
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def openapi_v3_hash(document: bytes) -> str:
    """Return the content hash Kubernetes puts in `?hash=`: uppercase hex sha512 of the served bytes."""
    return hashlib.sha512(document).hexdigest().upper()


def openapi_v3_index(scheme: Scheme) -> dict[str, Any]:
    """Return the `/openapi/v3` index: each group-version's path and its hash-pinned URL."""
    paths: dict[str, Any] = {}
    for group, types in scheme.groups():
        for version in dict.fromkeys(t.version for t in types):
            group_version = f"{group}/{version}" if group else version
            document = openapi_v3_document_bytes(scheme, group_version)
            assert document is not None
            path = openapi_v3_path(group_version)
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={openapi_v3_hash(document)}"}
    return {"paths": paths}


# --- OpenAPI v2 (Swagger 2.0) ----------------------------------------------------------------

V2_PROTOBUF_ACCEPT = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                      "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
"""Media types a client asks `/openapi/v2` in Protobuf with (kubectl sends the first)."""
V2_PROTOBUF_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
"""The Content-Type of the Protobuf answer, spelled as Kubernetes' kube-openapi spells it: the `@`
of the request form is not a token character, and Go's `mime.ParseMediaType` in client-go refuses it."""


def _v2(node: Any) -> Any:
    """A v3 schema as Swagger 2.0 writes it: `#/definitions/` references, a described `$ref` without allOf."""
    if isinstance(node, list):
        return [_v2(item) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1 and "$ref" in node["allOf"][0]:
        rest = {k: v for k, v in node.items() if k != "allOf"}
        node = {**node["allOf"][0], **rest}
    out = {k: _v2(v) for k, v in node.items()}
    if isinstance(out.get("$ref"), str):
        out["$ref"] = "#/definitions/" + out["$ref"].removeprefix(_REF)
    return out


def openapi_v2_document(scheme: Scheme) -> dict[str, Any]:
    """Return the `/openapi/v2` Swagger 2.0 document: every served kind's schema under `definitions`.

    Definitions are the v3 schemas (same names, extensions, descriptions
    and `required`) with `#/definitions/` references. `paths` is empty on
    purpose: operations are described in v3, which kubectl reads first; v2
    is its fallback for client-side validation (`create -f` of a kind
    without a PATCH operation, the reviews) and `explain
    --output=plaintext-openapiv2`. Listing operations here would make
    kubectl look for PATCH's `fieldValidation` in v2 and, not finding the
    review kinds, list CustomResourceDefinitions, which this server does not
    serve, failing the command.
    """
    pool = _Schemas(_gvks(scheme))
    for t in scheme.types:
        if t.strategy.openapi_schema is not None:
            pool.add(models.ObjectMeta)
            pool.add(models.ListMeta)
            pool.schemas.update(_custom_schemas(t))
            continue
        pool.add(t.model)
        if t.info.list_model is not None:
            pool.add(t.info.list_model)
    pool.add(models.DeleteOptions)
    pool.add(models.Status)
    pool.schemas[f"{_META}.Patch"] = dict(_PATCH_SCHEMA)
    return {
        "swagger": "2.0",
        "info": {"title": "miniplane", "version": "v1"},
        "paths": {},
        "definitions": {name: _v2(schema) for name, schema in sorted(pool.schemas.items())},
    }


def openapi_v2_json(scheme: Scheme) -> bytes:
    """Return the v2 document as compact, key-sorted JSON (cached per scheme and generation)."""
    return _v2_json(scheme, scheme.generation)


@functools.lru_cache(maxsize=8)
def _v2_json(scheme: Scheme, generation: int) -> bytes:
    return json.dumps(openapi_v2_document(scheme), sort_keys=True, separators=(",", ":")).encode()


def _yaml_text(value: Any) -> str:
    """A value as gnostic keeps vendor extensions: YAML text (`atomic\\n`, `- group: ...`)."""
    text = yaml.safe_dump(value, default_flow_style=False, sort_keys=False)
    return text.removesuffix("...\n") if not isinstance(value, (dict, list)) else text


def _named_any(pb: Any, name: str, value: Any) -> Any:
    return pb.NamedAny(name=name, value=pb.Any(yaml=_yaml_text(value)))


def _gnostic_schema(pb: Any, schema: dict[str, Any]) -> Any:
    """The gnostic `Schema` message of a Swagger 2.0 schema (the fields this server writes)."""
    out = pb.Schema()
    for key, value in schema.items():
        if key == "$ref":
            setattr(out, "_ref", value)
        elif key in ("description", "format", "title"):
            setattr(out, key, value)
        elif key == "type":
            out.type.value.extend([value] if isinstance(value, str) else value)
        elif key == "items":
            out.items.schema.extend(_gnostic_schema(pb, s) for s in (value if isinstance(value, list) else [value]))
        elif key == "properties":
            out.properties.SetInParent()
            out.properties.additional_properties.extend(
                pb.NamedSchema(name=n, value=_gnostic_schema(pb, s)) for n, s in value.items())
        elif key == "additionalProperties":
            if isinstance(value, bool):
                out.additional_properties.boolean = value
            else:
                out.additional_properties.schema.CopyFrom(_gnostic_schema(pb, value))
        elif key == "required":
            out.required.extend(value)
        elif key.startswith("x-"):
            out.vendor_extension.append(_named_any(pb, key, value))
    return out


def openapi_v2_protobuf(scheme: Scheme) -> bytes:
    """Return the v2 document as gnostic's Protobuf message (cached per scheme and generation)."""
    return _v2_protobuf(scheme, scheme.generation)


@functools.lru_cache(maxsize=8)
def _v2_protobuf(scheme: Scheme, generation: int) -> bytes:
    """Return the v2 document as gnostic's `openapi.v2.Document` Protobuf message (cached per scheme).

    kubectl parses these bytes with `proto.Unmarshal` into gnostic's
    Document (no envelope, no prefix).
    """
    doc = openapi_v2_document(scheme)
    message = pb.Document(swagger=doc["swagger"], info=pb.Info(**doc["info"]), paths=pb.Paths())
    message.definitions.SetInParent()
    message.definitions.additional_properties.extend(
        pb.NamedSchema(name=name, value=_gnostic_schema(pb, schema)) for name, schema in doc["definitions"].items())
    return message.SerializeToString(deterministic=True)


def content_etag(document: bytes) -> str:
    """Return the entity tag of served bytes (OpenAPI's, aggregated discovery's): Kubernetes' uppercase hex
    sha512, quoted."""
    return '"' + openapi_v3_hash(document) + '"'
