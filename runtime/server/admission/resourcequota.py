"""ResourceQuota admission: a write that would take a namespace over one of its quotas is refused, as
Kubernetes' `plugin/pkg/admission/resourcequota`.

Rules (namespaced kinds that quota counts, `runtime.machinery.quota`; the
main resource only, never a subresource; on the operations the kind's
evaluator handles: creates, and updates of Services and claims):

- each ResourceQuota of the namespace that limits (in `status.hard`, what
  the quota controller copied from `spec.hard`) a name the object charges,
  and whose scopes select it, is checked:
  - a pod must say what a cpu or memory quota limits: `pods "x" is
    forbidden: failed quota: q: must specify limits.cpu for: app;
    requests.cpu for: app`;
  - a quota whose usage is not known yet refuses: `status unknown for
    quota: q, resources: pods`;
  - the object's usage (on update, what grew from the old object's) added to
    `status.used` must stay within `status.hard`, else `exceeded quota: q,
    requested: pods=1, used: pods=2, limited: pods=2`;
- then each quota charged gets its new `status.used` written, checked
  against the revision read (kube's quota status update as part of
  admission): two creates that would both fit alone cannot both pass; a
  quota that changed meanwhile is read again and checked again (a few
  times, then 409 Conflict, as kube's retries run out). Within one server
  the checks of one namespace take turns, as kube's per-namespace queue;
- dry run: checked, nothing written.

Caveats:
    As in Kubernetes, the usage is charged before the object is stored: a
    write refused after admission (a taken name, a storage error) leaves
    the quota over-counted until the quota controller recounts it.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import trio

from runtime.machinery import errors
from runtime.machinery.quantity import ZERO
from runtime.machinery.quota import (
    Evaluator, ResourceList, add, evaluator_for, is_zero, less_than_or_equal, mask, negative_names, parse_list,
    pretty, pretty_names, quota_matches, subtract, to_text,
)
from runtime.machinery.storedobject import ObjectEncoder, StoredObject, copy_json
from runtime.models import catalog
from runtime.server.admission.context import AdmissionContext, forbidden, namespace_objects, resource_type
from runtime.server.kinds import AdmissionRequest
from runtime.server.storage import KeyNotFound, RevisionConflict, StoreError, StoreUnavailable

__all__ = ["ResourceQuotaAdmission", "check_request", "RETRIES"]

#: Times the quotas that changed under a check are read and checked again (Kubernetes' retries).
RETRIES = 3


def _has_usage(quota: dict[str, Any], names: list[str]) -> bool:
    used = (quota.get("status") or {}).get("used") or {}
    return all(name in used for name in names)


def check_request(quotas: list[StoredObject], request: AdmissionRequest, evaluator: Evaluator,
                  now: float | None = None) -> list[tuple[StoredObject, ResourceList]]:
    """Kubernetes' CheckRequest: the quotas the request charges, each with its new `status.used`.

    Raises Forbidden (see the module doc); an empty list: nothing to charge.
    """
    rt, obj = request.resource, request.obj
    pertinent = []
    for stored in quotas:
        quota = stored.obj
        hard = parse_list((quota.get("status") or {}).get("hard"))
        if not quota_matches(evaluator, quota, hard, obj):
            continue
        required = evaluator.matching_resources(hard)
        failure = evaluator.constraints(required, obj)
        if failure:
            raise forbidden(rt, obj, f"failed quota: {stored.name}: {failure}")
        if not _has_usage(quota, required):
            raise forbidden(rt, obj, f"status unknown for quota: {stored.name}, resources: {pretty_names(required)}")
        pertinent.append((stored, hard))
    if not pertinent:
        return []
    delta = evaluator.usage(obj, now)
    negative = negative_names(delta)
    if negative:
        raise forbidden(rt, obj, f"quota usage is negative for resource(s): {pretty_names(negative)}")
    if request.operation == "update" and request.old is not None:
        # Charged what grew, never credited what shrank (SubtractWithNonNegativeResult: the controller recounts).
        grown = subtract(delta, evaluator.usage(request.old, now))
        delta = {name: q if q.value > 0 else ZERO for name, q in grown.items()}
    if is_zero(delta):
        return []
    charged = []
    for stored, hard in pertinent:
        used = parse_list((stored.obj.get("status") or {}).get("used"))
        requested = mask(delta, hard)
        new_used = add(used, requested)
        within, exceeded = less_than_or_equal(mask(new_used, requested), hard)
        if not within:
            raise forbidden(rt, obj, f"exceeded quota: {stored.name}, requested: {pretty(mask(requested, exceeded))}, "
                                     f"used: {pretty(mask(used, exceeded))}, limited: {pretty(mask(hard, exceeded))}")
        charged.append((stored, new_used))
    return charged


class ResourceQuotaAdmission:
    """The plug-in over a registry's `context` (see the module doc); `clock`: wall seconds (pods' grace)."""

    def __init__(self, context: AdmissionContext, clock: Callable[[], float] = time.time) -> None:
        self.context = context
        self.clock = clock
        self.quotas = resource_type(context.scheme, catalog.RESOURCE_QUOTA)
        self._turns: dict[str, trio.Lock] = {}
        self._evaluators: dict[str, Evaluator | None] = {}  # by storage prefix: a kind's is made once

    async def validate(self, request: AdmissionRequest) -> None:
        """Refuse a write over quota (403), else charge it to the quotas (see the module doc)."""
        rt = request.resource
        if rt.storage_prefix not in self._evaluators:
            self._evaluators[rt.storage_prefix] = evaluator_for(rt)
        evaluator = self._evaluators[rt.storage_prefix]
        if self.quotas is None or evaluator is None or not evaluator.handles(request.operation):
            return
        namespace = request.obj["metadata"].get("namespace") or ""
        if not namespace_objects(self.context, self.quotas, namespace):
            return  # no quota here: nothing to check, no turn to take
        turn = self._turns.setdefault(namespace, trio.Lock())
        async with turn:
            try:
                await self._charge(namespace, request, evaluator)
            finally:
                if not turn.statistics().tasks_waiting:
                    self._turns.pop(namespace, None)

    async def _charge(self, namespace: str, request: AdmissionRequest, evaluator: Evaluator) -> None:
        assert self.quotas is not None
        quotas = namespace_objects(self.context, self.quotas, namespace)
        for _ in range(RETRIES + 1):
            charged = check_request(quotas, request, evaluator, self.clock())
            if not charged or request.dry_run:
                return
            changed = []
            for stored, used in charged:
                if not await self._write_usage(stored, used):
                    changed.append(stored)
            if not changed:
                return
            # Only the quotas that changed meanwhile are checked again (the others hold this request's charge).
            quotas = [fresh for stored in changed
                      if (fresh := await self.context.read_current(self.quotas, stored.key, stored.name)) is not None]
        name = changed[0].name
        raise errors.Conflict(f'Operation cannot be fulfilled on {self.quotas.group_resource} "{name}": the object has '
                              f"been modified; please apply your changes to the latest version and try again",
                              name=name, group=self.quotas.group, kind=self.quotas.plural)

    async def _write_usage(self, stored: StoredObject, used: ResourceList) -> bool:
        """Write the quota's new `status.used` if it is still at the revision read; False if it is not."""
        quota = copy_json(stored.obj)
        quota.setdefault("status", {})["used"] = to_text(used)
        try:
            await self.context.store.update(stored.key, ObjectEncoder(quota), expected_revision=stored.revision)
        except RevisionConflict:
            return False
        except KeyNotFound:
            pass  # deleted meanwhile: it limits nothing any more
        except StoreUnavailable as exc:
            raise errors.ServiceUnavailable(f"storage is unavailable: {exc}", retry_after=1) from exc
        except StoreError as exc:
            raise errors.InternalError(f"Internal error occurred: {exc}", causes=[errors.Cause("", str(exc))]) from exc
        return True
