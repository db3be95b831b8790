"""OpenAPI v3 documents: `/openapi/v3` (the index) and one document per group-version.

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
"""

from __future__ import annotations

import functools
import hashlib
import json
import types as pytypes
import typing
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from api.discovery import SUBRESOURCE_VERBS
from runtime import models
from runtime.models.base import field_extensions
from runtime.scheme import ResourceType, Scheme

__all__ = [
    "REQUIRED", "schema_name", "openapi_v3_path",
    "openapi_v3_document", "openapi_v3_document_bytes", "openapi_v3_hash", "openapi_v3_index",
]

_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_PACKAGES = {"meta": _META, "rbac": "io.k8s.api.rbac.v1", "core": "io.k8s.api.core.v1",
             "authorization": "io.k8s.api.authorization.v1",
             "authentication": "io.k8s.api.authentication.v1"}
_RENAMES = {"UserInfoModel": "UserInfo"}

# Fields the spec's tables mark required (JSON names). The models keep every
# field optional so that a missing one is a 422 from validation, not a 400.
REQUIRED: dict[type[BaseModel], tuple[str, ...]] = {
    models.PolicyRule: ("verbs",),
    models.RoleRef: ("apiGroup", "kind", "name"),
    models.Subject: ("kind", "name"),
    models.ClusterRoleBinding: ("roleRef",),
    models.RoleBinding: ("roleRef",),
    models.ClusterRoleList: ("items",),
    models.RoleList: ("items",),
    models.ClusterRoleBindingList: ("items",),
    models.RoleBindingList: ("items",),
    models.NamespaceList: ("items",),
    models.SubjectAccessReview: ("spec",),
    models.LocalSubjectAccessReview: ("spec",),
    models.SelfSubjectAccessReview: ("spec",),
    models.SelfSubjectRulesReview: ("spec",),
    models.SelfSubjectRulesReviewSpec: ("namespace",),
    models.SubjectAccessReviewStatus: ("allowed",),
    models.SubjectRulesReviewStatus: ("resourceRules", "nonResourceRules", "incomplete"),
    models.ResourceRule: ("verbs",),
    models.NonResourceRule: ("verbs",),
    models.SelectorRequirement: ("key", "operator"),
    models.LabelSelectorRequirement: ("key", "operator"),
    models.OwnerReference: ("apiVersion", "kind", "name", "uid"),
    models.NamespaceCondition: ("type", "status"),
}

_DESCRIPTIONS: dict[type[BaseModel], str] = {
    models.Namespace: "Namespace provides a scope for names; namespaced objects live and die with it.",
    models.SubjectAccessReview: "Checks whether a user or group can perform an action.",
    models.LocalSubjectAccessReview: "Checks whether a user or group can perform an action in one namespace.",
    models.SelfSubjectAccessReview: "Checks whether the current user can perform an action.",
    models.SelfSubjectRulesReview: "Lists the actions the current user can perform within a namespace.",
    models.SelfSubjectReview: "Returns the user information the server holds about the caller.",
    models.DeleteOptions: "Options of a delete request.",
    models.Status: "Status is the return value of calls that do not return other objects.",
}
_FIELD_DESCRIPTIONS = {
    "apiVersion": "The versioned schema of this representation of an object (group/version).",
    "kind": "The REST resource this object represents, in CamelCase. Cannot be updated.",
    "spec": "The request or desired state.",
    "status": "The observed state or the server's answer; filled in by the server.",
}
_OBJECT_META = "Standard object metadata."
_LIST_META = "Standard list metadata."
_FORMATS = {"creationTimestamp", "deletionTimestamp", "lastTransitionTime", "time"}
_PATCH_SCHEMA = {"description": "The body of a PATCH request; its shape depends on the Content-Type.",
                 "type": "object"}


def schema_name(model: type[BaseModel]) -> str:
    """Return the Kubernetes-style schema name of a model, e.g. `io.k8s.api.rbac.v1.ClusterRole`."""
    package = _PACKAGES[model.__module__.rsplit(".", 1)[-1]]
    return f"{package}.{_RENAMES.get(model.__name__, model.__name__)}"


def _ref(model: type[BaseModel]) -> dict[str, Any]:
    return {"$ref": _REF + schema_name(model)}


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
        description = model.__dict__.get("__doc__") or _DESCRIPTIONS.get(model)
        if description:
            schema["description"] = description.strip()
        schema["properties"] = {(info.alias or field): self._field(model, field, info.alias or field)
                                for field, info in model.model_fields.items()}
        if model in REQUIRED:
            schema["required"] = list(REQUIRED[model])
        if model in self.gvks:
            schema["x-kubernetes-group-version-kind"] = self.gvks[model]
        return _ref(model)

    def _field(self, model: type[BaseModel], field: str, json_name: str) -> dict[str, Any]:
        info = model.model_fields[field]
        schema = self.of(info.annotation)
        description = info.description
        if model in self.gvks:  # the standard top-level fields; `kind` in a RoleRef means something else
            description = description or _FIELD_DESCRIPTIONS.get(json_name)
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
            (inner,) = [a for a in args if a is not type(None)]
            return self.of(inner)
        if origin is list:
            return {"type": "array", "items": self.of(args[0])}
        if origin is dict:
            if args[1] is Any:
                return {"type": "object"}
            return {"type": "object", "additionalProperties": self.of(args[1])}
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self.add(annotation)
        scalars = {str: {"type": "string"}, bool: {"type": "boolean"},
                   int: {"type": "integer", "format": "int64"}, float: {"type": "number", "format": "double"}}
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


_Q = {n: _param(n, "query", t, d) for n, t, d in (
    ("pretty", "string", "If 'true', the output is pretty printed."),
    ("dryRun", "string", "When present (value `All`), changes are checked but not persisted."),
    ("fieldManager", "string", "Name of the actor making the change, recorded in managedFields."),
    ("fieldValidation", "string",
     "How unknown or duplicate fields are handled: Ignore, Warn (default) or Strict."),
    ("force", "boolean", "Apply requests only: take ownership of fields owned by other managers."),
    ("allowWatchBookmarks", "boolean", "Watch only: ask for BOOKMARK events."),
    ("continue", "string", "Token from a previous chunk of a paged list."),
    ("fieldSelector", "string", "Restricts the objects returned by their fields."),
    ("labelSelector", "string", "Restricts the objects returned by their labels."),
    ("limit", "integer", "Maximum number of items in one chunk of a list."),
    ("resourceVersion", "string", "The resource version a list or watch is served from."),
    ("resourceVersionMatch", "string", "How resourceVersion is applied to a list: NotOlderThan or Exact."),
    ("sendInitialEvents", "boolean", "Watch only: start with synthetic ADDED events for existing objects."),
    ("timeoutSeconds", "integer", "Time limit of a list or watch call."),
    ("watch", "boolean", "Watch for changes instead of listing."),
    ("gracePeriodSeconds", "integer", "Seconds before the object is deleted."),
    ("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean",
     "Force-delete an object that cannot be read from storage (feature gated)."),
    ("orphanDependents", "boolean", "Deprecated: use propagationPolicy."),
    ("propagationPolicy", "string", "Garbage collection of dependents: Orphan, Background or Foreground."),
)}
_LIST = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
         "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_DELETE = ("dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
           "orphanDependents", "propagationPolicy")
_DELETECOLLECTION = ("continue", "dryRun", "fieldSelector", "gracePeriodSeconds",
                     "ignoreStoreReadErrorWithClusterBreakingPotential", "labelSelector", "limit",
                     "orphanDependents", "propagationPolicy", "resourceVersion", "resourceVersionMatch",
                     "sendInitialEvents", "timeoutSeconds")
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json", "application/apply-patch+yaml")
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
            ok: dict[str, Any], codes: tuple[str, ...], body: dict[str, Any] | None = None) -> dict[str, Any]:
        group_token = "".join(p.capitalize() for p in (t.info.group_prefix or "core").split("."))
        op: dict[str, Any] = {
            "description": f"{_VERBS[action]} {t.kind}",
            "operationId": f"{_VERBS[action]}{group_token}{t.version.capitalize()}{op_id}",
            "tags": [f"{t.info.group_prefix or 'core'}_{t.version}"],
            "parameters": [_Q[p] for p in params],
            "responses": {**{c: {"description": _CODES[c], "content": ok} for c in codes},
                          "401": {"description": "Unauthorized"}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": {"group": t.group, "version": t.version, "kind": t.kind},
        }
        if body is not None:
            op["requestBody"] = body
        return op

    def _path(self, path: str, params: list[dict[str, Any]], ops: dict[str, Any]) -> None:
        if ops:
            self.paths[path] = {**ops, "parameters": [*params, _Q["pretty"]]}

    def _item(self, t: ResourceType, verbs: Iterable[str], op_id: str) -> dict[str, Any]:
        """Operations on one object (or one of its subresources): get, update, patch, delete."""
        obj = self._content(_ref(t.model))
        status = self._content(_ref(models.Status))
        ops: dict[str, Any] = {}
        if "get" in verbs:
            ops["get"] = self._op(t, "get", op_id, (), obj, ("200",))
        if "update" in verbs:
            ops["put"] = self._op(t, "put", op_id, _WRITE, obj, ("200", "201"), {"content": obj, "required": True})
        if "patch" in verbs:
            body = {"content": self._content(_ref_patch(), _PATCH_TYPES), "required": True}
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
        obj = self._content(_ref(t.model))
        listed = (self._content(_ref(t.info.list_model), [*self.media, *_WATCH_MEDIA])
                  if t.info.list_model else obj)

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
        for sub in t.info.subresources:
            self._path(f"{collection}/{{name}}/{sub}", ns_param + name_param,
                       self._item(t, SUBRESOURCE_VERBS.get(sub, ("get", "patch", "update")),
                                  scope + t.kind + sub.capitalize()))


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
    gvks: dict[type[BaseModel], list[dict[str, str]]] = {}
    for t in scheme.types:
        gvks[t.model] = [{"group": t.group, "kind": t.kind, "version": t.version}]
        if t.info.list_model is not None:
            gvks[t.info.list_model] = [{"group": t.group, "kind": t.list_kind, "version": t.version}]
    groups = dict.fromkeys(["", *(g for g, _ in scheme.groups())])
    gvks[models.DeleteOptions] = [{"group": g, "kind": "DeleteOptions", "version": "v1"} for g in groups]
    gvks[models.Status] = [{"group": "", "kind": "Status", "version": "v1"}]

    pool = _Schemas(gvks)
    for model in (*(t.model for t in served), *(t.info.list_model for t in served if t.info.list_model),
                  models.DeleteOptions, models.Status):
        pool.add(model)
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


@functools.lru_cache(maxsize=32)
def openapi_v3_document_bytes(scheme: Scheme, group_version: str) -> bytes | None:
    """Return the document as the compact, key-sorted JSON served (and hashed); None if not served.

    Cached per (scheme, group_version): the bytes never change while a scheme lives.
    """
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
