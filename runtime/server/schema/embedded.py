"""Embedded resources (`x-kubernetes-embedded-resource`): apiVersion, kind, metadata.

`embedded_errors(obj, schema)` is apiextensions' `objectmeta.Validate` for
the objects below the root (the root's metadata is the caller's: its
strategy validates ObjectMeta with `runtime.machinery.validation.validate_object_meta`).
Each embedded object needs `apiVersion` (a group/version) and `kind` (a
DNS-1035 label in any case); its `metadata`, if present, is ObjectMeta,
validated with `validate_object_meta` (name optional, namespaced when a
namespace is given, names as path segments), under the embedded path.

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from runtime.server.schema.schema_errors import invalid, required
from runtime.server.schema.structural.schema import Structural, visit_declared
from runtime.machinery.validation.fielderrors import FieldError
from runtime.machinery.validation.names import dns1035_label_errors, validate_object_meta

__all__ = ["embedded_errors", "embedded_resource_errors"]


def embedded_errors(obj: Any, schema: Structural | None, *, path: str = "") -> list[FieldError]:
    """Errors of every embedded resource under the root (see the module docstring)."""
    out: list[FieldError] = []

    def visit(x: Any, s: Structural, at: str) -> None:
        if s.x_embedded_resource and isinstance(x, dict) and x is not obj:  # the root's metadata is the caller's
            out.extend(embedded_resource_errors(x, at))

    if schema is not None:
        visit_declared(obj, schema, path, visit)
    return out


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _nonempty_string(x: dict, key: str, path: str, out: list[FieldError]) -> str:
    """`x[key]` when a non-empty string; else "", with its error in `out` (none when absent: that is `required`)."""
    if key not in x:
        return ""
    value = x[key]
    if not isinstance(value, str):
        out.append(invalid(_child(path, key), value, "must be a string"))
    elif not value:
        out.append(invalid(_child(path, key), value, "must not be empty"))
    else:
        return value
    return ""


def embedded_resource_errors(x: dict, path: str) -> list[FieldError]:
    """apiVersion, kind and metadata of one embedded object at `path`."""
    out: list[FieldError] = []
    if "apiVersion" not in x:
        out.append(required(_child(path, "apiVersion"), "must not be empty"))
    if "kind" not in x:
        out.append(required(_child(path, "kind"), "must not be empty"))
    api_version = _nonempty_string(x, "apiVersion", path, out)
    if api_version.count("/") > 1:
        out.append(invalid(_child(path, "apiVersion"), api_version, f"unexpected GroupVersion string: {api_version}"))
    kind = _nonempty_string(x, "kind", path, out)
    if kind and (problems := dns1035_label_errors(kind.lower())):
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

