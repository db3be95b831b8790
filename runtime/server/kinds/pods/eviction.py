"""A Pod's `eviction` subresource: POST a `policy/v1` Eviction to delete the Pod unless a PodDisruptionBudget
forbids it (Kubernetes' EvictionREST, `pkg/registry/core/pod/storage/eviction.go`).

- The body is a `policy/v1` Eviction (a `policy/v1beta1` one is read as
  it); the Eviction's name is the Pod's (400 `name in URL does not match name in
  Eviction object`); its `deleteOptions` are the delete's (grace period,
  preconditions, dry run, propagation).
- A Pod that is Pending, Succeeded or Failed, or already being deleted, is
  deleted without a budget's say (it disrupts nothing more).
- Else the budgets of its namespace whose selector matches its labels (an
  empty or invalid selector matches nothing) decide: none, it is deleted;
  more than one, the answer is a Failure Status (code 500) saying the
  eviction subresource does not support it; one:
  - an unready Pod is deleted without counting against it when the budget
    says `unhealthyPodEvictionPolicy: AlwaysAllow`, or when the budget is
    met (`currentHealthy >= desiredHealthy > 0`);
  - a budget whose status has not observed its generation yet (a new one,
    no controller) is 429 TooManyRequests `Cannot evict pod as it would
    violate the pod's disruption budget.`, Retry-After 10, cause
    DisruptionBudget `The disruption budget X is still being processed by the
    server.`; `disruptionsAllowed` 0 is that 429 with the cause `The disruption
    budget X needs N healthy pods and has M currently`; a negative one, or
    more than 2000 disrupted pods, is 403;
  - else one disruption is taken: `disruptionsAllowed` lowered (the
    DisruptionAllowed condition False at 0), the Pod recorded in
    `disruptedPods`, and the Pod deleted.
- Before the delete, the Pod gets the condition DisruptionTarget True
  (reason EvictionByEvictionAPI), as Kubernetes' PodDisruptionConditions
  does; a Pod on a node is then deleted gracefully (it stays, terminating).
- The answer is a success Status (201).

Departures: the delete is authorized as the caller's `delete` on the Pod
(Kubernetes needs only `create` on `pods/eviction`); a conflict while taking
a disruption is retried without limit rather than timing out.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from runtime.machinery import errors
from runtime.machinery.errors import Cause
from runtime.machinery.options import Body, ParsedDeleteOptions
from runtime.machinery.scheme import ResourceType
from runtime.machinery.selectors import SelectorError, label_selector_from_dict
from runtime.models.k8s import policy_v1
from runtime.server.kinds.decoding import decode_object
from runtime.server.kinds.pods.podconditions import now_rfc3339, pod_ready, set_pod_condition
from runtime.server.kinds.pods.podstore import PodServer, rewrite
from runtime.server.kinds.subresources import ActionSubresource
from runtime.server.rbac.user import UserInfo

__all__ = ["EvictionSubresource", "matching_budgets", "VIOLATION_MSG", "MAX_DISRUPTED_PODS"]

VIOLATION_MSG = "Cannot evict pod as it would violate the pod's disruption budget."
#: The disrupted pods a budget may record before evictions are refused (Kubernetes' MaxDisruptedPodSize).
MAX_DISRUPTED_PODS = 2000
_EVICTION = ResourceType.of("policy/v1", "Eviction", "evictions", model=policy_v1.Eviction)
_BUDGET_CAUSE = "DisruptionBudget"
_TERMINAL_OR_PENDING = ("Pending", "Succeeded", "Failed")
_SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def matching_budgets(pod: dict[str, Any], budgets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """getPodDisruptionBudgets: the budgets whose selector matches the pod (never an empty or invalid one)."""
    labels = pod["metadata"].get("labels") or {}
    found = []
    for budget in budgets:
        try:
            selector = label_selector_from_dict((budget.get("spec") or {}).get("selector"))
        except SelectorError:
            continue
        if not selector.empty and selector.matches(labels):
            found.append(budget)
    return found


def _delete_options(eviction: dict[str, Any]) -> ParsedDeleteOptions:
    sent = eviction.get("deleteOptions") or {}
    return ParsedDeleteOptions(dry_run=bool(sent.get("dryRun")), grace_period_seconds=sent.get("gracePeriodSeconds"),
                               preconditions=sent.get("preconditions"), orphan_dependents=sent.get("orphanDependents"),
                               propagation_policy=sent.get("propagationPolicy"))


def _still_processing(name: str) -> errors.TooManyRequests:
    return errors.TooManyRequests(VIOLATION_MSG, retry_after=10, causes=[
        Cause(_BUDGET_CAUSE, f"The disruption budget {name} is still being processed by the server.")])


def take_disruption(budget: dict[str, Any], pod_name: str) -> None:
    """checkAndDecrement on `budget`, in place: raises 429 or 403 when it allows no disruption."""
    meta, status = budget["metadata"], budget.setdefault("status", {})
    name = meta.get("name", "")
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        raise _still_processing(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise errors.Forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: pdb disruptions allowed is '
                               "negative", name=name, group="policy", kind="poddisruptionbudget")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise errors.Forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: DisruptedPods map too big - too '
                               "many evictions not confirmed by PDB controller", name=name, group="policy",
                               kind="poddisruptionbudget")
    if allowed == 0:
        raise errors.TooManyRequests(VIOLATION_MSG, causes=[Cause(_BUDGET_CAUSE, (
            f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} healthy pods and has "
            f"{int(status.get('currentHealthy') or 0)} currently"))])
    status["disruptionsAllowed"] = allowed - 1
    if allowed == 1:
        _set_allowed_condition(status)
    status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: now_rfc3339()}


def _set_allowed_condition(status: dict[str, Any]) -> None:
    """UpdateDisruptionAllowedCondition once none is allowed: DisruptionAllowed False, InsufficientPods."""
    conditions = status.setdefault("conditions", [])
    condition = {"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods", "message": "",
                 "observedGeneration": int(status.get("observedGeneration") or 0),
                 "lastTransitionTime": now_rfc3339()}
    for i, old in enumerate(conditions):
        if old.get("type") == "DisruptionAllowed":
            if old.get("status") == "False":
                condition["lastTransitionTime"] = old.get("lastTransitionTime") or condition["lastTransitionTime"]
            conditions[i] = condition
            return
    conditions.append(condition)


class EvictionSubresource(ActionSubresource):
    """`pods/eviction` (see the module doc)."""

    name = "eviction"
    kind = ("policy", "v1", "Eviction")
    model = policy_v1.Eviction

    def __init__(self, pods: ResourceType, budgets: ResourceType | None) -> None:
        self.pods = pods
        self.budgets = budgets

    def decode(self, body: Body, field_validation: str) -> tuple[dict[str, Any], list[str]]:
        """A policy/v1 Eviction; a policy/v1beta1 one (the same fields) is taken as it, as Kubernetes' decoder does."""
        data = body.data
        if isinstance(data, dict) and data.get("apiVersion") == "policy/v1beta1":
            body = Body(dict(data, apiVersion="policy/v1"), body.duplicates)
        return decode_object(_EVICTION, body, field_validation=field_validation)

    async def create(self, policy: Any, user: UserInfo, namespace: str, name: str, request: dict[str, Any],
                     load: Callable[[], Awaitable[dict[str, Any]]]) -> tuple[dict[str, Any], list[str]]:
        if request["metadata"].get("name", "") != name:
            raise errors.BadRequest("name in URL does not match name in Eviction object")
        server: PodServer = policy
        options = _delete_options(request)
        pinned = bool((options.preconditions or {}).get("resourceVersion"))
        while True:
            pod = await load()
            if (pod.get("status") or {}).get("phase") in _TERMINAL_OR_PENDING or pod["metadata"].get(
                    "deletionTimestamp"):
                try:
                    await self._delete(server, user, namespace, pod, options)
                except errors.Conflict:
                    if pinned:
                        raise
                    continue  # changed meanwhile: look again, as Kubernetes retries
                return dict(_SUCCESS), []
            break
        budgets = matching_budgets(pod, await self._budgets(server, namespace))
        if len(budgets) > 1:
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                               "does not support.", "code": 500}, []
        if budgets:
            budget = budgets[0]
            spec, status = budget.get("spec") or {}, budget.get("status") or {}
            healthy, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
            if not pod_ready(pod) and (spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
                                       or healthy >= desired > 0):
                try:
                    await self._delete(server, user, namespace, pod, options)
                except errors.Conflict:
                    if pinned:
                        raise
                    # It may have become ready meanwhile: the client is to retry (Kubernetes' answer).
                    raise _still_processing(budget["metadata"]["name"]) from None
                return dict(_SUCCESS), []
            await rewrite(server, self.budgets, namespace, budget["metadata"]["name"],  # type: ignore[arg-type]
                          lambda b: take_disruption(b, name), dry_run=options.dry_run)
        await self._delete(server, user, namespace, pod, options, pin=False)
        return dict(_SUCCESS), []

    async def _budgets(self, server: PodServer, namespace: str) -> list[dict[str, Any]]:
        """The PodDisruptionBudgets of `namespace`, read consistently (the watch cache once it caught up)."""
        if self.budgets is None:
            return []
        await server.wait_fresh()
        return [o.obj for o in server.kind_cache(self.budgets).list(self.budgets.namespace_prefix(namespace))]

    async def _delete(self, server: PodServer, user: UserInfo, namespace: str, pod: dict[str, Any],
                      options: ParsedDeleteOptions, *, pin: bool = True) -> None:
        """addConditionAndDeletePod: DisruptionTarget on the pod, then the delete (pinned to the pod's version
        read when `pin` and the caller pinned none, so a pod that changed meanwhile is looked at again)."""
        name = pod["metadata"]["name"]
        preconditions = dict(options.preconditions or {})
        if pin and not preconditions.get("resourceVersion"):
            preconditions["resourceVersion"] = pod["metadata"].get("resourceVersion", "")
        if not options.dry_run:
            marked = await rewrite(server, self.pods, namespace, name, lambda p: set_pod_condition(p, {
                "type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting"}), uid=preconditions.get("uid") or "",
                resource_version=preconditions.get("resourceVersion") or "")
            if preconditions.get("resourceVersion"):
                preconditions["resourceVersion"] = marked.obj["metadata"]["resourceVersion"]
        options = ParsedDeleteOptions(dry_run=options.dry_run, grace_period_seconds=options.grace_period_seconds,
                                      preconditions=preconditions or None, orphan_dependents=options.orphan_dependents,
                                      propagation_policy=options.propagation_policy)
        await server.delete(user, self.pods, namespace, name, options)
