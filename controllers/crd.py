"""CustomResourceDefinition controller: names, establishment and cleanup (apiextensions' own controllers).

For each CRD (Kubernetes' naming, establishing and finalizer controllers in one):

- Names: a CRD's plural, singular, kind, listKind and short names must not
  clash with another CRD of its group that already accepted them, nor with a
  built-in kind of that group. Without a clash `status.acceptedNames` becomes
  `spec.names` and `NamesAccepted` True; with one `NamesAccepted` is False
  (reason `NameConflict`) and the CRD is not established.
- Establishment: once its names are accepted, `Established` is True: every
  server now serves its kinds (`runtime.server.kinds.customresource`).
- Cleanup: a deleted CRD carries `customresourcecleanup.apiextensions.k8s.io`
  (added by its first delete). Its custom objects are deleted (they may wait
  for their own finalizers: the CRD is checked again every `recheck` s);
  once none is left the finalizer is removed and the CRD goes.

Status writes go through the `status` subresource with the CRD's
resourceVersion: a CRD changed meanwhile is a Conflict, retried with fresh state.
"""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any

from runtime.machinery import errors
from runtime.client.interface import Client, ObjectKey, object_meta
from runtime.controller.controller import Result
from runtime.controller.informer import Informer
from runtime.machinery.crds import CRD_CLEANUP_FINALIZER as CLEANUP_FINALIZER, is_custom, kinds_of, set_condition
from runtime.controller.manager import Manager
from runtime.machinery.scheme import ResourceType, Scheme

__all__ = ["CRDController", "setup", "name_conflicts"]

_NAME_FIELDS = ("plural", "singular", "kind", "listKind")


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _taken(names: dict[str, Any]) -> set[str]:
    return {names.get(f) for f in _NAME_FIELDS if names.get(f)} | set(names.get("shortNames") or ())


def name_conflicts(crd: dict[str, Any], others: list[dict[str, Any]], builtin: list[ResourceType]) -> list[str]:
    """The names of `crd` another CRD of its group (which accepted them first) or a built-in kind holds."""
    spec = crd.get("spec") or {}
    group, mine = spec.get("group"), _taken(spec.get("names") or {})
    held: set[str] = set()
    for other in others:
        if other is crd or object_meta(other).get("name") == object_meta(crd).get("name"):
            continue
        if (other.get("spec") or {}).get("group") == group:
            held |= _taken((other.get("status") or {}).get("acceptedNames") or {})
    for rt in builtin:
        if rt.group == group:
            held |= {rt.plural, rt.info.singular, rt.kind, rt.list_kind, *rt.info.short_names}
    return sorted(mine & held)


class CRDController:
    """The reconciler of CRDs, reading the CRD cache (see the module doc)."""

    def __init__(self, client: Client, crds: Informer, scheme: Scheme, *, recheck: float = 2.0) -> None:
        self.client = client
        self.crds = crds
        self.scheme = scheme
        self.recheck = recheck

    async def reconcile(self, key: ObjectKey) -> Result | None:
        crd = self.crds.get(key)
        if crd is None:
            return None
        if object_meta(crd).get("deletionTimestamp"):
            return await self._clean_up(crd)
        builtin = [t for t in self.scheme.types if not is_custom(t)]
        conflicts = name_conflicts(crd, self.crds.list(), builtin)
        updated = copy.deepcopy(crd)
        now = _now()
        if conflicts:
            changed = set_condition(updated, "NamesAccepted", "False", "NameConflict",
                                    f"names are already in use: {', '.join(conflicts)}", now)
            changed |= set_condition(updated, "Established", "False", "NotAccepted", "not all names are accepted",
                                     now)
        else:
            status = updated.setdefault("status", {})
            changed = status.get("acceptedNames") != (updated.get("spec") or {}).get("names")
            status["acceptedNames"] = copy.deepcopy((updated.get("spec") or {}).get("names"))
            changed |= set_condition(updated, "NamesAccepted", "True", "NoConflicts", "no conflicts found", now)
            changed |= set_condition(updated, "Established", "True", "InitialNamesAccepted",
                                     "the initial names have been accepted", now)
        if changed:
            await self.client.update(updated, subresource="status")
        return None

    async def _clean_up(self, crd: dict[str, Any]) -> Result | None:
        if CLEANUP_FINALIZER not in (object_meta(crd).get("finalizers") or []):
            return None
        left = 0
        for rt in self._kinds(crd)[:1]:  # every version shares one storage: one of them lists all
            page = await self.client.list(rt)
            for item in page.items:
                meta = object_meta(item)
                if meta.get("deletionTimestamp"):
                    left += 1
                    continue
                try:
                    answer = await self.client.delete(rt, meta.get("name") or "", namespace=meta.get("namespace") or "",
                                                      preconditions={"uid": meta.get("uid") or ""})
                except errors.NotFound:
                    continue
                left += answer.get("kind") != "Status"
        if left:
            return Result(requeue_after=self.recheck)
        released = copy.deepcopy(crd)
        released["metadata"]["finalizers"] = [f for f in object_meta(crd).get("finalizers") or []
                                              if f != CLEANUP_FINALIZER]
        try:
            await self.client.update(released)
        except errors.NotFound:
            pass
        return None

    def _kinds(self, crd: dict[str, Any]) -> list[ResourceType]:
        """The CRD's kinds: as the scheme serves them, else as a client addresses them."""
        return [self.scheme.by_resource(info.group or "", info.version, info.plural)
                or ResourceType(info, info.group or "", info.version) for info, _ in kinds_of(crd)]


def setup(manager: Manager, *, recheck: float = 2.0) -> CRDController:
    """Add the CRD controller to `manager`."""
    rt = manager.scheme.by_kind("CustomResourceDefinition")
    # The server client: the custom objects left are listed live before the finalizer goes.
    controller = CRDController(manager.api_reader, manager.informers.informer(rt), manager.scheme, recheck=recheck)
    manager.controller("customresourcedefinition").for_(rt).complete(controller.reconcile)
    return controller
