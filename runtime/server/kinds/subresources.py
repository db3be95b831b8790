"""Subresources that are objects of their own, as kube-apiserver's ScaleREST or TokenREST.

A kind's strategy lists them in `subresources` (name -> object); the
registry finds the one a request names and asks it, never the kind's
strategy with a `subresource` string:

- `ViewSubresource`: another kind's view of the object (a custom kind's
  `scale`: an autoscaling/v1 Scale). GET answers `view(obj)`; PUT and json
  or merge PATCH write a new view, which `from_view` turns into the new
  object (written as any update is: `runtime.server.registry.view_subresources`).
- `ActionSubresource`: a POST of another kind acting on the object (a
  ServiceAccount's `token`: a TokenRequest), nothing stored (`decode`, then
  `create`; `runtime.server.registry.action_subresources`);
- `ObjectSubresource`: the object itself, a write of which changes only its
  part (`StatusSubresource`; a Namespace's `finalize`), as kube's status
  strategies: `keep(new, old)` restricts the write, which is then an update
  as any (`UpdateStrategy.keep_to_subresource` asks it).

Each is a `Subresource`: it knows its `name` (the path's last segment, what
RBAC, audit and `managedFields[].subresource` name) and its `verbs` (405 for
any other), so the registry resolves a request's subresource once, at its
entry, and hands the object down (None: the main resource).
Views and actions say the kind they are (`kind`: group, version, kind),
which discovery and OpenAPI show; an action's `model` is its body's
pydantic model. An object subresource is the object's own kind (`kind` None).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from pydantic import BaseModel

from runtime.server.rbac.user import UserInfo
from runtime.machinery.options import Body

if TYPE_CHECKING:
    from runtime.server.kinds.base import PolicyContext

__all__ = ["Subresource", "ViewSubresource", "ActionSubresource", "ObjectSubresource", "StatusSubresource"]


class Subresource(ABC):
    """What every subresource is: its name and the verbs it serves (see the module doc)."""

    #: The subresource's name in the path (`status`, `scale`, `token`, `finalize`).
    name: str
    #: The verbs it serves (the kind's facts list the same: `KindInfo.subresources`).
    verbs: tuple[str, ...] = ("get", "patch", "update")


class ViewSubresource(Subresource):
    """A subresource that is another kind's view of the object (see the module doc)."""

    #: (group, version, kind) of the view.
    kind: tuple[str, str, str]
    #: A view has no pydantic model of its own here (OpenAPI refers to the kind by name).
    model: type[BaseModel] | None = None

    @abstractmethod
    def view(self, obj: dict[str, Any]) -> dict[str, Any]:
        """What a GET of the subresource answers for `obj`."""

    @abstractmethod
    def from_view(self, view: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
        """The object a written `view` makes of `current`; raises Invalid for a view that cannot be."""


class ActionSubresource(Subresource):
    """A subresource one POSTs another kind to, acting on the object (see the module doc)."""

    verbs = ("create",)
    #: (group, version, kind) of the body one POSTs (and of the answer).
    kind: tuple[str, str, str]
    #: The body's model (what OpenAPI shows).
    model: type[BaseModel] | None = None

    @abstractmethod
    def decode(self, body: Body, field_validation: str) -> tuple[dict[str, Any], list[str]]:
        """The body of a POST, decoded as its own kind, and its warnings; raises BadRequest."""

    @abstractmethod
    async def create(self, policy: "PolicyContext", user: UserInfo, namespace: str, name: str,
                     request: dict[str, Any],
                     load: Callable[[], Awaitable[dict[str, Any]]]) -> tuple[dict[str, Any], list[str]]:
        """The answer to a POST of `request` to object `name`, and its warnings.

        `load()` reads the object (404 when it is missing); nothing is stored
        by the generic code. Raises a StatusError to refuse.
        """


class ObjectSubresource(Subresource):
    """A subresource that is the object itself, a write of it changing only its part (see the module doc)."""

    #: The object's own kind.
    kind: tuple[str, str, str] | None = None
    model: type[BaseModel] | None = None

    @abstractmethod
    def keep(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        """Restrict `new`, a write of this subresource, to what it may change: the rest stays as in `old`."""


class StatusSubresource(ObjectSubresource):
    """`status`: a write changes only the status (metadata and spec stay as stored)."""

    name = "status"

    def keep(self, new: dict[str, Any], old: dict[str, Any]) -> None:
        status = new.get("status")
        new.clear()
        new.update({k: v for k, v in old.items() if k != "status"})
        new["metadata"] = dict(old["metadata"])
        if status is not None:
            new["status"] = status
