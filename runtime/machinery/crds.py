"""What a CustomResourceDefinition says, read as facts: the kinds it defines, its conditions, and
whether a served kind is custom.

`kinds_of(crd)` is the `KindInfo` of every served version (objects modelled by `CustomObject`:
only metadata typed); `condition`, `is_established` and `set_condition` read and write its status
conditions as apiextensions' helpers do; `is_custom(rt)` tells a kind served from a CRD (it may go
away) from a built-in one. Pure: no I/O.

Here, below the server and the clients, so that both read CRDs alike: the server's CRD strategy
(`runtime.server.kinds.crd`, `customresource`) serves these kinds, and a client following them
(`runtime.controller.customkinds`) or the CRD controller over HTTP (`controllers.crd`) names them
without loading the server's schemas and CEL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runtime.machinery.kindinfo import STATUS_VERBS, STORED_VERBS, KindInfo
from runtime.machinery.wellknown import CRD_CLEANUP_FINALIZER
from runtime.models.base import K8sModel
from runtime.models.catalog import BUILTIN_KINDS
from runtime.models.meta import ObjectMeta

if TYPE_CHECKING:
    from runtime.machinery.scheme import ResourceType

__all__ = ["CustomObject", "kinds_of", "is_custom", "condition", "is_established", "set_condition",
           "CRD_CLEANUP_FINALIZER"]

_BUILTIN = frozenset(BUILTIN_KINDS)


class CustomObject(K8sModel):
    """The model of every custom kind: only metadata is typed; the schema does the rest."""

    api_version: Any = None
    kind: Any = None
    metadata: ObjectMeta | None = None


def is_custom(rt: "ResourceType") -> bool:
    """Whether `rt` is a custom kind (served from a CRD, so it may go away), not a built-in one.

    A scheme serves the built-in kinds and those of its CRDs (`runtime.machinery.scheme.Scheme`): any
    other is custom, on a server's scheme and on a client's alike, strategy bound or not.
    """
    return rt.info not in _BUILTIN


def kinds_of(crd: dict[str, Any]) -> list[tuple[KindInfo, dict[str, Any]]]:
    """(KindInfo, version) of every served version of `crd`."""
    spec = crd.get("spec") or {}
    names = (crd.get("status") or {}).get("acceptedNames") or spec.get("names") or {}
    out = []
    for version in spec.get("versions") or []:
        if not version.get("served"):
            continue
        subresources: list[tuple[str, tuple[str, ...]]] = []
        sub = version.get("subresources") or {}
        if sub.get("scale") is not None:
            subresources.append(("scale", STATUS_VERBS))
        if sub.get("status") is not None:
            subresources.append(("status", STATUS_VERBS))
        info = KindInfo("", names.get("kind", ""), names.get("plural", ""), names.get("singular", ""),
                        spec.get("scope") == "Namespaced", CustomObject, None,
                        short_names=tuple(names.get("shortNames") or ()), verbs=STORED_VERBS,
                        categories=tuple(names.get("categories") or ()), subresources=tuple(sorted(subresources)),
                        group=spec.get("group", ""), version=version.get("name", ""))
        out.append((info, version))
    return out


def condition(crd: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The status condition of type `kind` (None if absent)."""
    return next((c for c in (crd.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def is_established(crd: dict[str, Any]) -> bool:
    """Whether the CRD's `Established` condition is True (its kinds are served)."""
    return (condition(crd, "Established") or {}).get("status") == "True"


def set_condition(crd: dict[str, Any], kind: str, status: str, reason: str, message: str,
                  now: str = "") -> bool:
    """Set condition `kind` on `crd` (a dict it may change); returns whether anything changed."""
    conditions = crd.setdefault("status", {}).setdefault("conditions", [])
    current = next((c for c in conditions if c.get("type") == kind), None)
    wanted = {"type": kind, "status": status, "reason": reason, "message": message}
    if current is not None and all(current.get(k) == v for k, v in wanted.items()):
        return False
    if current is not None and current.get("status") == status and current.get("lastTransitionTime"):
        wanted["lastTransitionTime"] = current["lastTransitionTime"]
    elif now:
        wanted["lastTransitionTime"] = now
    if current is None:
        conditions.append(wanted)
    else:
        conditions[conditions.index(current)] = wanted
    return True
