"""Namespace lifecycle: empty a terminating namespace, then release its `kubernetes` finalizer.

The registry gives every new namespace `spec.finalizers: ["kubernetes"]`; a
delete sets `deletionTimestamp` and phase Terminating, and forbids new
content. For a terminating namespace still holding `kubernetes`, this
controller (Kubernetes' `namespaced_resources_deleter.go`):

1. deletes every object of every namespaced kind in it (the kinds come from
   `scheme.namespaced_types()`), each with its uid as precondition. The
   objects are found in the informers' namespace index (O(the namespace's
   content), whatever the size of the store); before the namespace is
   released, a live list of one item per kind confirms that nothing the
   caches had not seen yet is left (if something is, that kind is listed and
   deleted live);
2. counts what remains (objects whose own finalizers hold them) and reports
   progress in `status.conditions` through the `status` subresource, with
   Kubernetes' condition types, reasons and messages:
   NamespaceDeletionDiscoveryFailure, NamespaceDeletionGroupVersionParsingFailure,
   NamespaceDeletionContentFailure, NamespaceContentRemaining,
   NamespaceFinalizersRemaining (status False with the "all fine" reason when clear);
3. while content remains, waits: the deletion of any object in a terminating
   namespace wakes it, and it looks again every `recheck` seconds anyway;
   failed deletes raise, so the namespace is retried with backoff;
4. once empty, removes `kubernetes` from `spec.finalizers` through the
   `finalize` subresource; the registry removes the namespace when no
   finalizer is left.

It is level-based: everything is recomputed from the current state, so a
restart in the middle of a cascade simply finishes it.
"""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any, Mapping

from runtime.machinery import errors
from runtime.client.interface import Client, ObjectKey, object_meta
from runtime.controller.controller import Result
from runtime.controller.informer import NAMESPACE_INDEX, Informer, ObjectEvent
from runtime.controller.manager import Manager
from runtime.controller.transforms import ownership_metadata
from runtime.machinery.crds import is_custom
from runtime.machinery.wellknown import NAMESPACE_FINALIZER
from runtime.machinery.scheme import ResourceType, Scheme

__all__ = ["NamespaceController", "ContentDeletionFailed", "deletion_conditions", "merge_conditions", "setup",
           "CONDITION_TYPES"]

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GV_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"

#: The condition types this controller maintains, in the order Kubernetes writes them.
CONDITION_TYPES = (DISCOVERY_FAILURE, GV_PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING,
                   FINALIZERS_REMAINING)

_OK = {  # type -> (reason, message) of the "nothing wrong" condition (status False)
    DISCOVERY_FAILURE: ("ResourcesDiscovered", "All resources successfully discovered"),
    GV_PARSING_FAILURE: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    CONTENT_FAILURE: ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    FINALIZERS_REMAINING: ("ContentRemoved", "All content successfully removed"),
}


class ContentDeletionFailed(Exception):
    """Some content could not be listed or deleted; the namespace is retried with backoff."""


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def deletion_conditions(remaining: dict[str, int], finalizers: dict[str, int],
                        failures: list[str]) -> list[dict[str, str]]:
    """The conditions describing a deletion pass (pure; no lastTransitionTime).

    `remaining`: group-resource name -> objects left; `finalizers`: finalizer ->
    objects it holds; `failures`: messages of failed lists and deletes.
    """
    found: dict[str, dict[str, str]] = {}
    if failures:
        found[CONTENT_FAILURE] = {
            "reason": "ContentDeletionFailed",
            "message": f"Failed to delete all resource types, {len(failures)} remaining: "
                       + ", ".join(sorted(failures))}
    left = sorted(f"{resource} has {n} resource instances" for resource, n in remaining.items() if n)
    if left:
        found[CONTENT_REMAINING] = {"reason": "SomeResourcesRemain",
                                    "message": "Some resources are remaining: " + ", ".join(left)}
    held = sorted(f"{name} in {n} resource instances" for name, n in finalizers.items() if n)
    if held:
        found[FINALIZERS_REMAINING] = {"reason": "SomeFinalizerRemain",
                                       "message": "Some finalizers are remaining: " + ", ".join(held)}
    conditions = []
    for ctype in CONDITION_TYPES:
        if ctype in found:
            conditions.append({"type": ctype, "status": "True", **found[ctype]})
        else:
            reason, message = _OK[ctype]
            conditions.append({"type": ctype, "status": "False", "reason": reason, "message": message})
    return conditions


def merge_conditions(current: list[dict[str, Any]], wanted: list[dict[str, str]],
                     now: str) -> tuple[list[dict[str, Any]], bool]:
    """`current` with `wanted` applied (Kubernetes' updateConditions); returns (conditions, changed).

    A condition keeps its lastTransitionTime unless its status changes;
    conditions of other types are kept as they are.
    """
    merged = copy.deepcopy(current)
    changed = False
    for want in wanted:
        have = next((c for c in merged if c.get("type") == want["type"]), None)
        if have is None:
            merged.append(dict(want, lastTransitionTime=now))
            changed = True
        elif (have.get("status"), have.get("reason"), have.get("message")) != \
                (want["status"], want["reason"], want["message"]):
            if have.get("status") != want["status"]:
                have["lastTransitionTime"] = now
            have.update(status=want["status"], reason=want["reason"], message=want["message"])
            changed = True
    return merged, changed


def _terminating(obj: dict[str, Any] | None) -> bool:
    return obj is not None and bool(object_meta(obj).get("deletionTimestamp"))


class NamespaceController:
    """The reconciler of namespace deletion (see the module docs).

    `content` maps namespaced kinds to their informers, whose namespace index
    finds what to delete; a kind without one is listed live. Only the metadata
    of content objects is read, so metadata-only informers do.
    """

    def __init__(self, client: Client, namespaces: Informer, scheme: Scheme, *, recheck: float = 5.0,
                 content: Mapping[ResourceType, Informer] | None = None) -> None:
        self.client = client
        self.namespaces = namespaces
        self.scheme = scheme
        self.recheck = recheck
        self.rt = scheme.by_kind("Namespace")
        self.content = dict(content or {})

    # ---- event mapping ---------------------------------------------------------------------------

    def content_owner(self, obj: dict[str, Any]) -> list[ObjectKey]:
        """An object's namespace, when that namespace is terminating (its deletion may be progress)."""
        namespace = object_meta(obj).get("namespace") or ""
        if namespace and _terminating(self.namespaces.get(ObjectKey("", namespace))):
            return [ObjectKey("", namespace)]
        return []

    @staticmethod
    def content_progress(event: ObjectEvent) -> bool:
        """Deletions, and changes to objects already being deleted (e.g. a finalizer removed)."""
        return event.type == "DELETED" or _terminating(event.obj)

    @staticmethod
    def namespace_terminating(event: ObjectEvent) -> bool:
        return event.type != "DELETED" and _terminating(event.obj)

    # ---- reconcile -------------------------------------------------------------------------------

    async def reconcile(self, key: ObjectKey) -> Result:
        if not _terminating(self.namespaces.get(key)):
            return Result()
        try:
            # Several actors edit a terminating namespace: act on its latest state.
            namespace = await self.client.get(self.rt, key.name)
        except errors.NotFound:
            return Result()
        if not _terminating(namespace):
            return Result()
        if NAMESPACE_FINALIZER not in ((namespace.get("spec") or {}).get("finalizers") or []):
            return Result()  # already released by us; other finalizers are someone else's
        remaining, finalizers, failures = await self._delete_content(key.name)
        namespace = await self._report(namespace, deletion_conditions(remaining, finalizers, failures))
        if failures:
            raise ContentDeletionFailed(f"namespace {key.name}: " + "; ".join(sorted(failures)))
        if any(remaining.values()):
            return Result(requeue_after=self.recheck)
        await self._finalize(namespace)
        return Result()

    async def _delete_content(self, name: str) -> tuple[dict[str, int], dict[str, int], list[str]]:
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        failures: list[str] = []
        for rt in self.scheme.namespaced_types():
            resource = f"{rt.plural}.{rt.group}"
            informer = self.content.get(rt)
            try:
                if informer is not None:
                    left = await self._delete_all(rt, name, informer.by_index(NAMESPACE_INDEX, name), failures)
                    if left or (await self.client.list(rt, namespace=name, limit=1)).items == []:
                        self._count(resource, left, remaining, finalizers)
                        continue
                    # The cache has not seen everything yet: this kind is listed live.
                page = await self.client.list(rt, namespace=name)
            except errors.StatusError as exc:
                failures.append(f"failed to list {resource}: {exc}")
                continue
            self._count(resource, await self._delete_all(rt, name, page.items, failures), remaining, finalizers)
        return remaining, finalizers, failures

    async def _delete_all(self, rt: ResourceType, namespace: str, items: list[dict[str, Any]],
                          failures: list[str]) -> list[dict[str, Any]]:
        """Delete `items`; return what is left of them (terminating, held by finalizers, or failed)."""
        left = []
        for item in items:
            item = await self._delete_one(rt, namespace, item, failures)
            if item is not None:
                left.append(item)
        return left

    @staticmethod
    def _count(resource: str, left: list[dict[str, Any]], remaining: dict[str, int],
               finalizers: dict[str, int]) -> None:
        for item in left:
            remaining[resource] = remaining.get(resource, 0) + 1
            for finalizer in object_meta(item).get("finalizers") or []:
                finalizers[finalizer] = finalizers.get(finalizer, 0) + 1

    async def _delete_one(self, rt: ResourceType, namespace: str, item: dict[str, Any],
                          failures: list[str]) -> dict[str, Any] | None:
        """Delete `item` unless already terminating; return what is left of it (None: gone)."""
        if _terminating(item):
            return item
        meta = object_meta(item)
        try:
            answer = await self.client.delete(rt, meta.get("name") or "", namespace=namespace,
                                              preconditions={"uid": meta.get("uid") or ""})
        except errors.NotFound:
            return None
        except errors.StatusError as exc:
            failures.append(f'failed to delete {rt.plural}.{rt.group} "{meta.get("name")}": {exc}')
            return item
        return None if answer.get("kind") == "Status" else answer

    async def _report(self, namespace: dict[str, Any], wanted: list[dict[str, str]]) -> dict[str, Any]:
        status = namespace.get("status") or {}
        conditions, changed = merge_conditions(status.get("conditions") or [], wanted, _now())
        if not changed and status.get("phase") == "Terminating":
            return namespace
        updated = copy.deepcopy(namespace)
        updated["status"] = dict(status, phase="Terminating", conditions=conditions)
        return await self.client.update(updated, subresource="status")

    async def _finalize(self, namespace: dict[str, Any]) -> None:
        released = copy.deepcopy(namespace)
        spec = released.setdefault("spec", {})
        spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != NAMESPACE_FINALIZER]
        try:
            await self.client.update(released, subresource="finalize")
        except errors.NotFound:
            pass  # another deleter finished first


def setup(manager: Manager, *, recheck: float = 5.0) -> NamespaceController:
    """Add the namespace controller to `manager`: namespaces, plus every namespaced kind as content."""
    scheme = manager.scheme
    namespaces_rt = scheme.by_kind("Namespace")
    # Custom kinds come and go with their CRDs: they are listed live (see NamespaceController).
    builtin = [rt for rt in scheme.namespaced_types() if not is_custom(rt)]
    # Metadata-only content informers (the garbage collector's), or another controller's keeping more: only
    # names, uids, deletionTimestamps and finalizers are read.
    content = {rt: manager.informers.informer_keeping(rt, ownership_metadata) for rt in builtin}
    # The server client: what a namespace still holds is listed live, as Kubernetes' namespace deleter does.
    controller = NamespaceController(manager.api_reader, manager.informers.informer(namespaces_rt), scheme,
                                     recheck=recheck, content=content)
    builder = manager.controller("namespace").for_(namespaces_rt, controller.namespace_terminating)
    for rt in builtin:
        # No replay: a terminating namespace is reconciled at start through `for_` anyway.
        builder.watches(rt, controller.content_owner, controller.content_progress, replay=False,
                        keeping=ownership_metadata)
    builder.complete(controller.reconcile)
    return controller
