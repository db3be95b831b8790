"""`KindInfo`: a kind's facts (group, names, scope, model, verbs, subresources), independent of the API domain.

A `Scheme` serves a kind from its facts (`Scheme.register`); the built-in
kinds' facts are `runtime.models.catalog`, a custom kind's are read from its
CRD (`runtime.server.kinds.customresource`). Its behaviour is a strategy of
`runtime.server.kinds`, bound by the scheme. Data only: imports no other
project module.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

__all__ = ["KindInfo", "STORED_VERBS", "STATUS_VERBS"]

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
    model: type[BaseModel]
    list_model: type[BaseModel] | None = None
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = STORED_VERBS
    categories: tuple[str, ...] = ()
    virtual: bool = False  # a review: create only, never stored
    subresources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    group: str | None = None
    version: str = "v1"

    def subresource_verbs(self, name: str) -> tuple[str, ...] | None:
        """The verbs of subresource `name`, None when the kind has no such subresource."""
        return dict(self.subresources).get(name)
