"""The resource quota controller: a ResourceQuota's `status` says its limits and what the namespace uses,
as Kubernetes' `pkg/controller/resourcequota`.

For each ResourceQuota:

- `status.hard` is `spec.hard` (canonical quantities);
- `status.used` is recounted from the namespace's objects, for the names
  `spec.hard` limits (each evaluator of `runtime.machinery.quota`: pods'
  requests and limits, services, claims, `count/<resource>.<group>` of
  every built-in kind), within the quota's scopes; names nothing counts
  keep what they had (a name no evaluator knows has no usage, so admission
  refuses what it would limit: `status unknown for quota`);
- the status is written (the `status` subresource, at the quota's
  resourceVersion) only when it changed.

A quota is recounted when its spec changes (not its status: admission
writes `status.used` as it charges, and a recount then could miss an
object charged but not yet seen), when an object it may count is deleted
or changes what it charges (a pod that ends, a service that changes type,
a claim resized), and every `RESYNC` seconds (Kubernetes'
`--resource-quota-sync-period`: what no event says, e.g. a pod past its
deletion grace).

Caveats:
    Custom kinds are not followed (`count/<plural>.<group>` of a custom
    kind is counted at admission but not recounted here). Kubernetes' race
    is kept: a recount while an admitted object is not yet in the cache
    counts it out until the next recount.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from runtime.client.interface import Client, ObjectKey, object_meta
from runtime.controller.controller import Result
from runtime.controller.informer import Informer, ObjectEvent
from runtime.controller.manager import Manager
from runtime.controller.transforms import ownership_metadata, without_managed_fields
from runtime.machinery.crds import is_custom
from runtime.machinery.quota import Evaluator, equal, evaluator_for, mask, parse_list, to_text, usage_stats
from runtime.machinery.scheme import ResourceType
from runtime.models.catalog import RESOURCE_QUOTA

__all__ = ["ResourceQuotaController", "RESYNC", "calculate_usage", "setup"]

#: Seconds between recounts of each quota (kube-controller-manager's default: five minutes).
RESYNC = 300.0


def calculate_usage(quota: dict[str, Any], hard: list[str], counted: dict[Evaluator, list[dict[str, Any]]],
                    now: float | None = None) -> dict[str, Any]:
    """Kubernetes' CalculateUsage: what `counted` (each evaluator's objects of the quota's namespace) uses of
    the `hard` names, within the quota's scopes."""
    total: dict[str, Any] = {}
    for evaluator, objects in counted.items():
        names = evaluator.matching_resources(hard)
        if names:
            total.update(usage_stats(evaluator, quota, names, objects, now))
    return mask(total, hard)


class ResourceQuotaController:
    """Keeps each quota's status (see the module doc)."""

    def __init__(self, client: Client, quotas: Informer, counted: dict[ResourceType, Informer], *,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.quotas = quotas
        self.counted = {rt: (evaluator, counted[rt]) for rt in counted
                        if (evaluator := evaluator_for(rt)) is not None}
        self.clock = clock

    def quotas_of(self, obj: dict[str, Any]) -> list[ObjectKey]:
        """The quotas of the object's namespace (what its change may recount)."""
        namespace = object_meta(obj).get("namespace") or ""
        return [ObjectKey(namespace, object_meta(q).get("name") or "") for q in self.quotas.list(namespace)]

    def usage_changed(self, rt: ResourceType) -> Callable[[ObjectEvent], bool]:
        """Deletions, and changes of what an object charges (a create was charged by admission)."""
        evaluator = self.counted[rt][0]

        def predicate(event: ObjectEvent) -> bool:
            if event.type == "DELETED":
                return True
            if event.type != "MODIFIED" or event.old is None:
                return False
            now = self.clock()
            return not equal(evaluator.usage(event.old, now), evaluator.usage(event.obj, now))
        return predicate

    async def reconcile(self, key: ObjectKey) -> Result | None:
        quota = self.quotas.get(key)
        if quota is None:
            return None
        spec_hard = parse_list((quota.get("spec") or {}).get("hard"))
        status = quota.get("status") or {}
        hard = sorted(spec_hard)
        counted = {evaluator: informer.list(key.namespace) for evaluator, informer in self.counted.values()}
        used = {**parse_list(status.get("used")), **calculate_usage(quota, hard, counted, self.clock())}
        new_status = {"hard": to_text(spec_hard), "used": to_text(mask(used, hard))}
        if status.get("hard") != new_status["hard"] or status.get("used") != new_status["used"]:
            await self.client.update({**quota, "status": new_status}, subresource="status")
        return Result(requeue_after=RESYNC)


def _spec_changed(event: ObjectEvent) -> bool:
    """A quota's spec changed, or its status.hard is not its spec.hard (status-only writes are admission's)."""
    if event.type != "MODIFIED" or event.old is None:
        return True
    spec = (event.obj.get("spec") or {}).get("hard")
    return (event.old.get("spec") or {}).get("hard") != spec or (event.obj.get("status") or {}).get("hard") is None


def setup(manager: Manager) -> ResourceQuotaController | None:
    """Add the quota controller to `manager` (None when the scheme serves no ResourceQuota)."""
    quota_rt = next((rt for rt in manager.scheme.stored_types() if rt.info is RESOURCE_QUOTA), None)
    if quota_rt is None:
        return None
    counted = [rt for rt in manager.scheme.stored_types() if not is_custom(rt) and evaluator_for(rt) is not None]
    # A kind only counted needs no more than its identity: the garbage collector's metadata-only informer
    # (100,000 Roles then cost no decoded spec here); the others (Pods, Services, claims) no managed fields.
    shape = {rt: ownership_metadata if evaluator_for(rt).metadata_only else without_managed_fields  # type: ignore
             for rt in counted}
    controller = ResourceQuotaController(manager.client, manager.informers.informer(quota_rt),
                                         {rt: manager.informers.informer_keeping(rt, shape[rt]) for rt in counted})
    builder = manager.controller("resourcequota").for_(quota_rt, _spec_changed)
    for rt in controller.counted:
        builder.watches(rt, controller.quotas_of, controller.usage_changed(rt), replay=False,
                        keeping=shape[rt])
    builder.complete(controller.reconcile)
    return controller
