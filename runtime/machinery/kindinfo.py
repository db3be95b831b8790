"""`KindInfo`: a kind's facts (group, names, scope, model, verbs, subresources), independent of the API domain.

A `Scheme` serves a kind from its facts (`Scheme.register`); the built-in
kinds' facts are `runtime.models.catalog`, a custom kind's are read from its
CRD (`runtime.server.kinds.customresource`). Its behaviour is a strategy of
`runtime.server.kinds`, bound by the scheme. Data only: imports no other
project module.

A kind's model may be given by reference, `"module:Class"` (the catalog's
are), and is imported when first asked for (`info.model`): a client that
never decodes an insight kind never builds its models. `names_model(cls)`
says whether a class is the kind's model without importing it.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass

from pydantic import BaseModel

__all__ = ["KindInfo", "ModelRef", "model_ref_of", "STORED_VERBS", "STATUS_VERBS"]

#: A model class, or its `"module:Class"` reference (imported when first asked for).
ModelRef = type[BaseModel] | str

#: Verbs of a stored kind's resource.
STORED_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
#: Verbs of a `status`-like subresource.
STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class KindInfo:
    """A kind's facts, independent of the API domain.

    `group_prefix` is "" for core and otherwise the group name without the
    domain (`rbac.authorization`); `group` an absolute group name instead (custom
    kinds). `subresources` maps each subresource to its verbs.
    """

    group_prefix: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    model_ref: ModelRef
    list_model_ref: ModelRef | None = None
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = STORED_VERBS
    categories: tuple[str, ...] = ()
    virtual: bool = False  # a review: create only, never stored
    subresources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    group: str | None = None
    version: str = "v1"

    # Cached on the instance (a frozen dataclass lets cached_property write its __dict__): `rt.model` is read
    # on every write's decode, and is a plain attribute read after the first.
    @functools.cached_property
    def model(self) -> type[BaseModel]:
        return _resolved(self.model_ref)

    @functools.cached_property
    def list_model(self) -> type[BaseModel] | None:
        return None if self.list_model_ref is None else _resolved(self.list_model_ref)

    def names_model(self, model: type, ref: str = "") -> bool:
        """Whether `model` is this kind's model (a reference is compared by name, `ref` if the caller has it:
        nothing is imported)."""
        mine = self.model_ref
        return mine is model if not isinstance(mine, str) else mine == (ref or model_ref_of(model))

    def subresource_verbs(self, name: str) -> tuple[str, ...] | None:
        """The verbs of subresource `name`, None when the kind has no such subresource."""
        return dict(self.subresources).get(name)


def model_ref_of(model: type) -> str:
    """The `"module:Class"` reference of a model class."""
    return f"{model.__module__}:{model.__qualname__}"


def _resolved(ref: ModelRef) -> type[BaseModel]:
    return ref if not isinstance(ref, str) else _imported(ref)


@functools.cache
def _imported(ref: str) -> type[BaseModel]:
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)
