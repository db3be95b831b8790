"""The base model and the field helpers that carry Kubernetes list/map semantics."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import core_schema
from pydantic.alias_generators import to_camel

__all__ = ["K8sModel", "Base64", "list_field", "map_field", "int_field", "field_extensions"]


class K8sModel(BaseModel):
    """Base of every model: camelCase JSON names, strict types, unknown fields ignored.

    Strict: text in a number field, a number in a string field, an object where
    a list is expected are decode errors (400), as Kubernetes' decoder does.
    Unknown fields are found before decoding by `runtime.fieldvalidation`.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, strict=True, extra="ignore",
        frozen=False, validate_default=False,
    )

    def to_dict(self) -> dict[str, Any]:
        """The Kubernetes JSON form: camelCase keys, unset fields omitted."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Base64(str):
    """Go's `[]byte` as its JSON form: base64 text (RFC 4648, padded); OpenAPI `format: byte`.

    The model checks the JSON type only (a string); whether the text is base64 is
    the kind's decoding's (`runtime.server.kinds.configdata`), which answers in
    Go's words.
    """

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        return core_schema.str_schema(strict=True)


#: A private marker (never published): the field's schema declares no list type, which server-side apply then
#: derives from its strategic merge key (`runtime.machinery.patch.schema`).
UNDECLARED_LIST_TYPE = "x-miniplane-undeclared-list-type"


def list_field(*, list_type: str | None = None, map_keys: list[str] | None = None,
               patch_strategy: str | None = None, patch_merge_key: str | None = None,
               alias: str | None = None, description: str | None = None, default: Any = None) -> Any:
    """A list field with its Kubernetes semantics (`default` for a result's own use: OpenAPI omits it).

    list_type: `atomic` (replaced whole on merge), `set` (scalars merged as a set)
    or `map` (objects merged by `map_keys`); None: undeclared, published as atomic.
    patch_strategy/patch_merge_key are the strategic-merge-patch markers (`merge`,
    `retainKeys`, ...).
    """
    extra: dict[str, Any] = {"x-kubernetes-list-type": list_type or "atomic"}
    if list_type is None:
        extra[UNDECLARED_LIST_TYPE] = True
    if map_keys:
        extra["x-kubernetes-list-map-keys"] = map_keys
    if patch_strategy:
        extra["x-kubernetes-patch-strategy"] = patch_strategy
    if patch_merge_key:
        extra["x-kubernetes-patch-merge-key"] = patch_merge_key
    return Field(default=default, alias=alias, description=description, json_schema_extra=extra)


def map_field(*, map_type: str = "granular", description: str | None = None, alias: str | None = None,
              default: Any = None) -> Any:
    """A map field: `granular` maps merge per key, `atomic` maps are replaced whole."""
    extra = {"x-kubernetes-map-type": map_type} if map_type != "granular" else None
    return Field(default=default, alias=alias, description=description, json_schema_extra=extra)


def int_field(*, bits: int = 64, description: str | None = None, alias: str | None = None) -> Any:
    """An integer field of Go's `int32` or `int64`: a number outside its range is a decode error (400), as
    Go's JSON decoder refuses it; an int32 field says so in OpenAPI (`format: int32`)."""
    bound = 1 << (bits - 1)
    extra = {"format": f"int{bits}"} if bits != 64 else None
    return Field(default=None, ge=-bound, le=bound - 1, alias=alias, description=description, json_schema_extra=extra)


def field_extensions(model: type[BaseModel], name: str) -> dict[str, Any]:
    """The `x-kubernetes-*` markers declared on one field of a model (empty if none)."""
    info = model.model_fields[name]
    extra = info.json_schema_extra
    return {k: v for k, v in extra.items() if not k.startswith("x-miniplane-")} if isinstance(extra, dict) else {}
