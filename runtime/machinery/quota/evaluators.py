"""What an object charges to quota, per kind: Kubernetes' `pkg/quota/v1/evaluator/core` and the generic
object count evaluator (`k8s.io/apiserver/pkg/quota/v1/generic`).

`evaluator_for(rt)` is a kind's evaluator (None for what quota ignores:
events, cluster-scoped kinds). Each says which resource names it tracks
(`matching_resources`), which operations can change usage (`handles`),
what one object uses (`usage`), whether it is in a quota's scopes
(`matches_scope`) and, pods only, the requests a quota on cpu or memory
demands (`constraints`, Kubernetes' words).

- every kind: `count/<resource>.<group>` (`count/<resource>` in core) is
  1 per object; configmaps, secrets and resourcequotas also
  count under their legacy names; creates only;
- pods: `pods`, compute requests and limits (`requests.cpu`,
  `limits.memory`, `cpu` and `memory` meaning requests, ephemeral-storage,
  hugepages, `requests.<extended>`), summed over containers, the largest
  init container when more, plus overhead; a terminal pod (Succeeded,
  Failed) or one past its deletion grace is charged `count/pods` only;
  scopes Terminating, NotTerminating, BestEffort, NotBestEffort,
  PriorityClass, CrossNamespacePodAffinity; creates only (in-place resize
  is off, as by default);
- services: `services`, `services.nodeports` (a NodePort's or
  LoadBalancer's ports), `services.loadbalancers`; creates and updates;
- persistentvolumeclaims: `persistentvolumeclaims`, `requests.storage`,
  and per storage class `<class>.storageclass.storage.k8s.io/requests.storage`
  and `.../persistentvolumeclaims`; creates and updates.

A quota with scopes matches pods only (no other evaluator knows scopes).
"""

from __future__ import annotations

import time
from datetime import datetime
from fractions import Fraction
from typing import Any, Callable, Iterable

from runtime.machinery.kindinfo import KindInfo
from runtime.machinery.quantity import Quantity
from runtime.machinery.quota.resources import ResourceList, add, mask, maximum, parse_list
from runtime.models import catalog

__all__ = ["Evaluator", "PodEvaluator", "ServiceEvaluator", "PersistentVolumeClaimEvaluator", "evaluator_for",
           "scope_selectors", "quota_matches", "usage_stats", "pod_requests", "pod_limits", "is_best_effort",
           "STORAGE_CLASS_SUFFIX"]

ONE = Quantity(Fraction(1))
#: What a storage class's quota names carry after the class's name (Kubernetes' fixed group).
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
#: Kinds counted under an older name too (Kubernetes' legacyObjectCountAliases).
LEGACY_NAMES = {catalog.CONFIG_MAP: "configmaps", catalog.SECRET: "secrets", catalog.RESOURCE_QUOTA: "resourcequotas"}
#: What quota never counts: events (not quota-ed before, and not to be).
IGNORED = (catalog.CORE_EVENT, catalog.EVENTS_EVENT)
#: Scope selector of one quota: (scope name, operator, values).
Selector = tuple[str, str, tuple[str, ...]]


class Evaluator:
    """The generic object count evaluator: `count/<group resource>` (and a legacy name), creates only."""

    operations = frozenset({"create"})
    #: Whether `usage` and `matches_scope` read nothing but the object's metadata (a count): the quota
    #: controller then follows the kind with a metadata-only informer.
    metadata_only = True

    def __init__(self, group_resource: str, legacy_name: str = "") -> None:
        self.names = frozenset({f"count/{group_resource}", *([legacy_name] if legacy_name else [])})

    def handles(self, operation: str) -> bool:
        return operation in self.operations

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return sorted(n for n in names if n in self.names)

    def usage(self, obj: dict[str, Any], now: float | None = None) -> ResourceList:
        return {name: ONE for name in self.names}

    def matches_scope(self, selector: Selector, obj: dict[str, Any]) -> bool:
        return False  # only pods know scopes

    def constraints(self, required: Iterable[str], obj: dict[str, Any]) -> str:
        """Why `obj` cannot be admitted under a quota of `required` names ("" : it can)."""
        return ""


# ---- pods ---------------------------------------------------------------------------------------

COMPUTE = ("cpu", "memory", "ephemeral-storage")
POD_NAMES = frozenset({"pods", "count/pods", *COMPUTE, *(f"requests.{r}" for r in COMPUTE),
                       *(f"limits.{r}" for r in COMPUTE)})
#: The names whose quota demands every container say them (Kubernetes: "this was a mistake", kept).
VALIDATION_NAMES = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
HUGEPAGES = ("hugepages-", "requests.hugepages-")


def _extended(name: str) -> bool:
    """An extended resource (`example.com/gpu`): qualified by a domain that is not kubernetes.io's."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def _resources(container: dict[str, Any]) -> tuple[ResourceList, ResourceList]:
    res = container.get("resources") or {}
    return parse_list(res.get("requests")), parse_list(res.get("limits"))


def _sum_with_init(pod: dict[str, Any], which: int) -> ResourceList:
    """Containers summed (restartable init containers with them), the largest init container when more."""
    spec = pod.get("spec") or {}
    total: ResourceList = {}
    for c in spec.get("containers") or []:
        total = add(total, _resources(c)[which])
    sidecars: ResourceList = {}
    init: ResourceList = {}
    for c in spec.get("initContainers") or []:
        own = _resources(c)[which]
        if c.get("restartPolicy") == "Always":
            total = add(total, own)
            sidecars = add(sidecars, own)
            continue
        init = maximum(init, add(own, sidecars))
    return maximum(total, init)


def pod_requests(pod: dict[str, Any]) -> ResourceList:
    """The pod's requests (Kubernetes' resourcehelper.PodRequests), overhead added."""
    overhead = parse_list((pod.get("spec") or {}).get("overhead"))
    return add(_sum_with_init(pod, 0), overhead)


def pod_limits(pod: dict[str, Any]) -> ResourceList:
    """The pod's limits (PodLimits): overhead added to the limits it has."""
    limits = _sum_with_init(pod, 1)
    overhead = parse_list((pod.get("spec") or {}).get("overhead"))
    return add(limits, mask(overhead, limits))


def _compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """podComputeUsageHelper: `pods` 1, and what requests and limits charge."""
    out: ResourceList = {"pods": ONE}
    for r in COMPUTE:
        if r in requests:
            out[r] = out[f"requests.{r}"] = requests[r]
        if r in limits:
            out[f"limits.{r}"] = limits[r]
    for name, q in requests.items():
        if name.startswith(HUGEPAGES[0]):
            out[name] = out[f"requests.{name}"] = q
        if _extended(name):
            out[f"requests.{name}"] = q
    return out


def _seconds(stamp: str) -> float | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError):
        return None


def pod_is_charged(pod: dict[str, Any], now: float) -> bool:
    """QuotaV1Pod: not terminal, and not past its deletion grace (stuck terminating: not charged)."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    grace = meta.get("deletionGracePeriodSeconds")
    deleted = _seconds(meta.get("deletionTimestamp") or "")
    return not (deleted is not None and grace is not None and now > deleted + grace)


def is_best_effort(pod: dict[str, Any]) -> bool:
    """QoS BestEffort: no container requests or limits cpu or memory above zero."""
    spec = pod.get("spec") or {}
    for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        for items in _resources(c):
            if any(items.get(r, Quantity(Fraction(0))).value > 0 for r in ("cpu", "memory")):
                return False
    return True


def _cross_namespace_affinity(pod: dict[str, Any]) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = affinity.get(kind) or {}
        terms = list(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or []) + [
            (t or {}).get("podAffinityTerm") or {} for t in rules.get("preferredDuringSchedulingIgnoredDuringExecution")
            or []]
        if any((t or {}).get("namespaceSelector") is not None or (t or {}).get("namespaces") for t in terms):
            return True
    return False


def _terminating(pod: dict[str, Any]) -> bool:
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return isinstance(deadline, int) and deadline >= 0


def _priority_class(pod: dict[str, Any], operator: str, values: tuple[str, ...]) -> bool:
    name = (pod.get("spec") or {}).get("priorityClassName") or ""
    if operator == "Exists":
        return bool(name)
    if operator == "In":
        return name in values
    if operator == "NotIn":
        return name not in values
    return False  # DoesNotExist: the selector's label set always has the key (Kubernetes' quirk)


#: A pod's quota scopes: scope name -> whether the pod is in it (operator, values: the PriorityClass scope's).
POD_SCOPES: dict[str, Callable[[dict[str, Any], str, tuple[str, ...]], bool]] = {
    "Terminating": lambda pod, op, values: _terminating(pod),
    "NotTerminating": lambda pod, op, values: not _terminating(pod),
    "BestEffort": lambda pod, op, values: is_best_effort(pod),
    "NotBestEffort": lambda pod, op, values: not is_best_effort(pod),
    "PriorityClass": _priority_class,
    "CrossNamespacePodAffinity": lambda pod, op, values: _cross_namespace_affinity(pod),
}


class PodEvaluator(Evaluator):
    """Pods (see the module doc)."""

    metadata_only = False

    def __init__(self) -> None:
        self.names = POD_NAMES

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return sorted(n for n in names if n in POD_NAMES or n.startswith(HUGEPAGES)
                      or (n.startswith("requests.") and _extended(n.removeprefix("requests."))))

    def usage(self, obj: dict[str, Any], now: float | None = None) -> ResourceList:
        out: ResourceList = {"count/pods": ONE}
        if not pod_is_charged(obj, time.time() if now is None else now):
            return out
        return add(out, _compute_usage(pod_requests(obj), pod_limits(obj)))

    def matches_scope(self, selector: Selector, obj: dict[str, Any]) -> bool:
        match = POD_SCOPES.get(selector[0])
        return match is not None and match(obj, selector[1], selector[2])

    def constraints(self, required: Iterable[str], obj: dict[str, Any]) -> str:
        """`must specify limits.cpu for: a,b; requests.memory for: a` when containers leave out what is quota-ed."""
        wanted = set(required) & VALIDATION_NAMES
        missing: dict[str, set[str]] = {}
        spec = obj.get("spec") or {}
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            said = set(_compute_usage(*_resources(c)))
            for name in wanted - said:
                missing.setdefault(name, set()).add(c.get("name") or "")
        if not missing:
            return ""
        return "must specify " + "; ".join(f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


# ---- services, claims -----------------------------------------------------------------------------

class ServiceEvaluator(Evaluator):
    """Services: count, node ports, load balancers; creates and updates (a type change charges)."""

    operations = frozenset({"create", "update"})
    metadata_only = False

    def __init__(self) -> None:
        self.names = frozenset({"count/services", "services", "services.nodeports", "services.loadbalancers"})

    def usage(self, obj: dict[str, Any], now: float | None = None) -> ResourceList:
        spec = obj.get("spec") or {}
        ports = spec.get("ports") or []
        zero = Quantity(Fraction(0))
        out: ResourceList = {"count/services": ONE, "services": ONE, "services.nodeports": zero,
                             "services.loadbalancers": zero}
        kind = spec.get("type")
        if kind == "NodePort":
            out["services.nodeports"] = Quantity(Fraction(len(ports)))
        elif kind == "LoadBalancer":
            if spec.get("allocateLoadBalancerNodePorts") is False:
                counted = sum(1 for p in ports if (p or {}).get("nodePort"))
            else:
                counted = len(ports)
            out["services.nodeports"] = Quantity(Fraction(counted))
            out["services.loadbalancers"] = ONE
        return out


class PersistentVolumeClaimEvaluator(Evaluator):
    """Claims: count and requested storage, in total and per storage class; creates and updates (resize)."""

    operations = frozenset({"create", "update"})
    metadata_only = False

    def __init__(self) -> None:
        self.names = frozenset({"count/persistentvolumeclaims", "persistentvolumeclaims", "requests.storage"})

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return sorted(n for n in names if n in self.names or (STORAGE_CLASS_SUFFIX in n and n.endswith(
            ("/requests.storage", "/persistentvolumeclaims"))))

    def usage(self, obj: dict[str, Any], now: float | None = None) -> ResourceList:
        out: ResourceList = {"persistentvolumeclaims": ONE, "count/persistentvolumeclaims": ONE}
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        spec = obj.get("spec") or {}
        storage_class = annotations.get(STORAGE_CLASS_ANNOTATION) or spec.get("storageClassName") or ""
        if storage_class:
            out[storage_class + STORAGE_CLASS_SUFFIX + "persistentvolumeclaims"] = ONE
        requested = parse_list((spec.get("resources") or {}).get("requests")).get("storage")
        if requested is not None:
            out["requests.storage"] = requested
            if storage_class:
                out[storage_class + STORAGE_CLASS_SUFFIX + "requests.storage"] = requested
        return out


_SPECIAL: dict[KindInfo, type[Evaluator]] = {
    catalog.POD: PodEvaluator, catalog.SERVICE: ServiceEvaluator,
    catalog.PERSISTENT_VOLUME_CLAIM: PersistentVolumeClaimEvaluator,
}


def evaluator_for(rt: Any) -> Evaluator | None:
    """The evaluator of resource type `rt` (None: quota ignores it; see the module doc)."""
    if not rt.namespaced or rt.virtual or rt.info in IGNORED:
        return None
    special = _SPECIAL.get(rt.info)
    if special is not None:
        return special()
    return Evaluator(rt.group_resource, LEGACY_NAMES.get(rt.info, ""))


def scope_selectors(quota: dict[str, Any]) -> list[Selector]:
    """A quota's scopes and scope selector's expressions, as selectors (a scope: `Exists`)."""
    spec = quota.get("spec") or {}
    out: list[Selector] = [(s, "Exists", ()) for s in spec.get("scopes") or []]
    for e in (spec.get("scopeSelector") or {}).get("matchExpressions") or []:
        out.append((e.get("scopeName") or "", e.get("operator") or "", tuple(e.get("values") or ())))
    return out


def quota_matches(evaluator: Evaluator, quota: dict[str, Any], hard: Iterable[str], obj: dict[str, Any]) -> bool:
    """The quota limits something the evaluator tracks and every scope selects `obj` (quota.Matches)."""
    if not evaluator.matching_resources(hard):
        return False
    return all(evaluator.matches_scope(s, obj) for s in scope_selectors(quota))


def usage_stats(evaluator: Evaluator, quota: dict[str, Any], resources: list[str], objects: Iterable[dict[str, Any]],
                now: float | None = None) -> ResourceList:
    """What `objects` in the quota's scopes use of `resources` (each at least zero), as the controller sums."""
    selectors = scope_selectors(quota)
    total: ResourceList = {name: Quantity(Fraction(0)) for name in resources}
    for obj in objects:
        if all(evaluator.matches_scope(s, obj) for s in selectors):
            total = add(total, mask(evaluator.usage(obj, now), resources))
    return total
