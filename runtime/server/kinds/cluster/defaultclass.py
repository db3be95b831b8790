"""The default class of a kind of classes (StorageClass, IngressClass), as Kubernetes' DefaultStorageClass
and DefaultIngressClass admission plugins find it: of the classes annotated default, the newest (equal
creation times: the first by name). A class strategy follows its objects the watch cache holds
(`SchemeObserver`) into a `DefaultClasses`, which the claimed kind's admission asks."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["DefaultClasses"]


class DefaultClasses:
    """The default classes seen, by name (their creation timestamps); `is_default(obj)` says which are."""

    def __init__(self, is_default: Callable[[dict[str, Any]], bool]) -> None:
        self.is_default = is_default
        self.created: dict[str, str] = {}

    def observe(self, event_type: str, obj: dict[str, Any]) -> None:
        """Follow one class's change."""
        name = obj["metadata"].get("name", "")
        if event_type != "DELETED" and self.is_default(obj):
            self.created[name] = obj["metadata"].get("creationTimestamp", "")
        else:
            self.created.pop(name, None)

    def replace(self, objs: list[dict[str, Any]]) -> None:
        """Follow a relist: `objs` are every class now."""
        self.created.clear()
        for obj in objs:
            self.observe("ADDED", obj)

    def newest(self) -> str | None:
        """The default class's name, None when no class is default."""
        if not self.created:
            return None
        latest = max(self.created.values())  # RFC 3339 in UTC: the text orders as the times
        return min(name for name, created in self.created.items() if created == latest)
