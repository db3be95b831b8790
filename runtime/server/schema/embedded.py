"""Embedded resources (`x-kubernetes-embedded-resource`): apiVersion, kind, metadata.

`embedded_errors(obj, schema)` is apiextensions' `objectmeta.Validate` for
the objects below the root (the root's metadata is the caller's: its
strategy validates ObjectMeta with `runtime.machinery.validation.validate_object_meta`).
Each embedded object needs `apiVersion` (a group/version) and `kind` (a
DNS-1035 label in any case); its `metadata`, if present, is ObjectMeta,
validated with `validate_object_meta` (name optional, namespaced when a
namespace is given, names as path segments), under the embedded path.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from runtime.server.schema.schema_errors import invalid, required
from runtime.server.schema.structural.schema import Structural
from runtime.machinery.validation.fielderrors import FieldError
from runtime.machinery.validation.names import dns1035_label_errors, validate_object_meta

__all__ = ["embedded_errors", "embedded_resource_errors"]


def embedded_errors(obj: Any, schema: Structural | None, *, path: str = "") -> list[FieldError]:
    """Errors of every embedded resource under the root (see the module docstring)."""
    out: list[FieldError] = []
    _walk(obj, schema, path, out, root=True)
    return out


def _walk(x: Any, s: Structural | None, path: str, out: list[FieldError], *, root: bool = False) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        if s.x_embedded_resource and not root:
            out.extend(embedded_resource_errors(x, path))
        for key, value in x.items():
            prop = s.properties.get(key)
            if prop is not None:
                _walk(value, prop, f"{path}.{key}" if path else key, out)
            elif s.additional_schema is not None:
                _walk(value, s.additional_schema, f"{path}[{key}]", out)
    elif isinstance(x, list):
        for i, item in enumerate(x):
            _walk(item, s.items, f"{path}[{i}]", out)


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def embedded_resource_errors(x: dict, path: str) -> list[FieldError]:
    """apiVersion, kind and metadata of one embedded object at `path`."""
    out: list[FieldError] = []
    if "apiVersion" not in x:
        out.append(required(_child(path, "apiVersion"), "must not be empty"))
    if "kind" not in x:
        out.append(required(_child(path, "kind"), "must not be empty"))
    api_version = x.get("apiVersion")
    if "apiVersion" in x:
        if not isinstance(api_version, str):
            out.append(invalid(_child(path, "apiVersion"), api_version, "must be a string"))
        elif not api_version:
            out.append(invalid(_child(path, "apiVersion"), api_version, "must not be empty"))
        elif api_version.count("/") > 1:
            out.append(invalid(_child(path, "apiVersion"), api_version,
                               f"unexpected GroupVersion string: {api_version}"))
    kind = x.get("kind")
    if "kind" in x:
        if not isinstance(kind, str):
            out.append(invalid(_child(path, "kind"), kind, "must be a string"))
        elif not kind:
            out.append(invalid(_child(path, "kind"), kind, "must not be empty"))
        elif problems := dns1035_label_errors(kind.lower()):
            out.append(invalid(_child(path, "kind"), kind,
                               "may have mixed case, but should otherwise match: " + ",".join(problems)))
    if "metadata" in x:
        meta = x["metadata"]
        if not isinstance(meta, dict):
            out.append(invalid(_child(path, "metadata"), meta, "must be an object"))
        else:
            meta = {**meta, "name": meta.get("name") or "fakename"}
            for err in validate_object_meta(meta, namespaced=bool(meta.get("namespace")), name_rule="path-segment"):
                out.append(dataclasses.replace(err, field=_child(path, err.field)))
    return out

