"""Defaults must be pruned and valid (apiextensions' `defaulting.ValidateDefaults`).

`default_errors(schema, path)` checks every `default` of a structural
schema against the schema node it sits on: it must survive pruning
unchanged (`<path>.default: Invalid value: ...: must not have unknown
fields`), pass OpenAPI validation, list-type uniqueness and the node's CEL
rules, each error placed under `<path>.default`. Paths of schema nodes are
Kubernetes' (`properties[spec].properties[replicas]`, `items`,
`additionalProperties`).

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

import dataclasses

from runtime.server.schema.cel.rules import cel_errors
from runtime.server.schema.schema_errors import invalid
from runtime.server.schema.listtypes import list_type_errors
from runtime.server.schema.openapi import json_equal, openapi_errors
from runtime.server.schema.pruning import prune
from runtime.server.schema.structural.schema import Structural
from runtime.machinery.validation.fielderrors import FieldError

__all__ = ["default_errors"]


def default_errors(schema: Structural, path: str) -> list[FieldError]:
    """Errors of every default under `schema` (at schema path `path`)."""
    out: list[FieldError] = []
    _walk(schema, path, out, is_root=True)
    return out


def _under(prefix: str, field: str) -> str:
    if field in ("", "<nil>"):
        return prefix
    return f"{prefix}.{field}" if not field.startswith("[") else prefix + field


def _walk(s: Structural, path: str, out: list[FieldError], *, is_root: bool = False) -> None:
    if s.has_default and s.default is not None:
        at = f"{path}.default"
        pruned, _ = prune(s.default, s, is_resource_root=s.x_embedded_resource)
        if not json_equal(pruned, s.default):
            out.append(invalid(at, s.default, "must not have unknown fields"))
        else:
            errs = [*openapi_errors(s.default, s), *list_type_errors(s.default, s)]
            if not errs:
                errs.extend(cel_errors(s.default, s))
            out.extend(dataclasses.replace(e, field=_under(at, e.field)) for e in errs)
    for key, prop in s.properties.items():
        if is_root and key == "metadata":
            continue
        _walk(prop, f"{path}.properties[{key}]", out)
    if s.items is not None:
        _walk(s.items, f"{path}.items", out)
    if s.additional_schema is not None:
        _walk(s.additional_schema, f"{path}.additionalProperties", out)
