"""LimitRanger: a namespace's LimitRanges default and bound what its Pods and claims ask for, as Kubernetes'
`plugin/pkg/admission/limitranger`.

Rules (creates of Pods, creates and updates of PersistentVolumeClaims; no
subresource; an object being deleted is let be):

- defaults (mutating, Pod creates): a container (and init container)
  without a request or a limit of a resource gets the LimitRange's
  `Container` item's `defaultRequest` (requests) and `default` (limits);
  the pod is annotated `kubernetes.io/limit-ranger: LimitRanger plugin
  set: cpu, memory request for container app; cpu limit for container
  app` (`init container x` for init containers);
- bounds (validating): a `Container` item's `min` (a request at least it,
  a limit too), `max` (a limit at most it, a request too),
  `maxLimitRequestRatio` (limit / request at most it), on each container;
  a `Pod` item's on the pod's requests and limits (containers summed, the
  largest init container when more); a `PersistentVolumeClaim` item's
  `min` and `max` on the claim's requested storage;
- a violation is 403 Forbidden with every failure in Kubernetes' words:
  `pods "x" is forbidden: [minimum cpu usage per Container is 100m, but
  request is 50m, maximum memory usage per Container is 1Gi, but limit is
  2Gi]` (one failure: without the brackets). Failures are given in the
  limit range's item order, then by resource name (Go's map order is
  random).
"""

from __future__ import annotations

from typing import Any, Callable

from runtime.machinery.quantity import Quantity
from runtime.machinery.quota import ResourceList, parse_list, pod_limits, pod_requests
from runtime.models import catalog
from runtime.server.admission.context import AdmissionContext, forbidden, namespace_objects, resource_type
from runtime.server.kinds import AdmissionRequest

__all__ = ["LimitRanger", "ANNOTATION", "default_pod", "pod_violations", "claim_violations", "aggregate"]

ANNOTATION = "kubernetes.io/limit-ranger"
#: A limit range item's `type`s (Kubernetes' LimitType: the words happen to be kind names).
CONTAINER, POD, CLAIM = "Container", "Pod", "PersistentVolumeClaim"


def _items(limit_range: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [i for i in (limit_range.get("spec") or {}).get("limits") or [] if (i or {}).get("type") == kind]


def _merge(container: dict[str, Any], requests: dict[str, str], limits: dict[str, str], label: str) -> list[str]:
    """Give `container` the defaults it lacks; what was set, in the annotation's words."""
    had_resources = "resources" in container
    resources = container.setdefault("resources", {})
    said = []
    for field, defaults, word in (("limits", limits, "limit"), ("requests", requests, "request")):
        have = resources.get(field) or {}
        added = sorted(name for name in defaults if name not in have)
        if added:
            resources[field] = {**have, **{name: defaults[name] for name in added}}
            said.append((word, added))
    if not resources and not had_resources:
        container.pop("resources")
    # Requests are said before limits, whatever order they were set in.
    return [f"{', '.join(added)} {word} for {label} {container.get('name') or ''}"
            for word, added in sorted(said, key=lambda s: s[0] != "request")]


def default_pod(limit_range: dict[str, Any], pod: dict[str, Any]) -> None:
    """Kubernetes' PodMutateLimitFunc: the `Container` item's defaults into containers that lack them."""
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    for item in _items(limit_range, CONTAINER):
        requests.update(item.get("defaultRequest") or {})
        limits.update(item.get("default") or {})
    if not requests and not limits:
        return
    spec = pod.get("spec") or {}
    said = [s for c in spec.get("containers") or [] for s in _merge(c, requests, limits, "container")]
    said += [s for c in spec.get("initContainers") or [] for s in _merge(c, requests, limits, "init container")]
    if said:
        annotations = pod["metadata"].setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(said)


def _minimum(kind: str, name: str, bound: Quantity, requests: ResourceList, limits: ResourceList) -> str:
    if name not in requests:
        return f"minimum {name} usage per {kind} is {bound}.  No request is specified"
    if requests[name].milli() < bound.milli():
        return f"minimum {name} usage per {kind} is {bound}, but request is {requests[name]}"
    if name in limits and limits[name].milli() < bound.milli():
        return f"minimum {name} usage per {kind} is {bound}, but limit is {limits[name]}"
    return ""


def _maximum(kind: str, name: str, bound: Quantity, requests: ResourceList, limits: ResourceList) -> str:
    if name not in limits:
        return f"maximum {name} usage per {kind} is {bound}.  No limit is specified"
    if limits[name].milli() > bound.milli():
        return f"maximum {name} usage per {kind} is {bound}, but limit is {limits[name]}"
    if name in requests and requests[name].milli() > bound.milli():
        return f"maximum {name} usage per {kind} is {bound}, but request is {requests[name]}"
    return ""


def _maximum_request(kind: str, name: str, bound: Quantity, requests: ResourceList, limits: ResourceList) -> str:
    """A claim's max: on its request (a claim's limits are not the user's ask)."""
    if name not in requests:
        return f"maximum {name} usage per {kind} is {bound}.  No request is specified"
    if requests[name].milli() > bound.milli():
        return f"maximum {name} usage per {kind} is {bound}, but request is {requests[name]}"
    return ""


def _ratio(kind: str, name: str, bound: Quantity, requests: ResourceList, limits: ResourceList) -> str:
    request = requests[name].milli() if name in requests else 0
    limit = limits[name].milli() if name in limits else 0
    if request == 0:
        return f"{name} max limit to request ratio per {kind} is {bound}, but no request is specified or request is 0"
    if limit == 0:
        return f"{name} max limit to request ratio per {kind} is {bound}, but no limit is specified or limit is 0"
    ratio = limit / request
    if ratio * 1000 > bound.milli():
        return f"{name} max limit to request ratio per {kind} is {bound}, but provided ratio is {ratio:f}"
    return ""


Check = Callable[[str, str, Quantity, ResourceList, ResourceList], str]
_POD_CHECKS: tuple[tuple[str, Check], ...] = (("min", _minimum), ("max", _maximum), ("maxLimitRequestRatio", _ratio))


def _check(item: dict[str, Any], kind: str, checks: tuple[tuple[str, Check], ...], requests: ResourceList,
           limits: ResourceList) -> list[str]:
    found = []
    for field, check in checks:
        for name, bound in sorted(parse_list(item.get(field)).items()):
            failure = check(kind, name, bound, requests, limits)
            if failure:
                found.append(failure)
    return found


def pod_violations(limit_range: dict[str, Any], pod: dict[str, Any]) -> list[str]:
    """Kubernetes' PodValidateLimitFunc: each container against `Container` items, the pod against `Pod` ones."""
    spec = pod.get("spec") or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    found = []
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        kind = (item or {}).get("type")
        if kind == CONTAINER:
            for c in containers:
                res = c.get("resources") or {}
                found += _check(item, kind, _POD_CHECKS, parse_list(res.get("requests")), parse_list(res.get("limits")))
        elif kind == POD:
            found += _check(item, kind, _POD_CHECKS, pod_requests(pod), pod_limits(pod))
    return found


def claim_violations(limit_range: dict[str, Any], claim: dict[str, Any]) -> list[str]:
    """PersistentVolumeClaimValidateLimitFunc: `min` and `max` on the claim's requests."""
    requests = parse_list(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    found = []
    for item in _items(limit_range, CLAIM):
        found += _check(item, CLAIM, (("min", _minimum), ("max", _maximum_request)), requests, {})
    return found


def aggregate(failures: list[str]) -> str:
    """Go's utilerrors.NewAggregate(...).Error(): one as it is, more in brackets."""
    return failures[0] if len(failures) == 1 else "[" + ", ".join(failures) + "]"


class LimitRanger:
    """The plug-in over a registry's `context` (see the module doc): `mutate`, then `validate`."""

    def __init__(self, context: AdmissionContext) -> None:
        self.context = context
        self.limit_ranges = resource_type(context.scheme, catalog.LIMIT_RANGE)

    def _applies(self, request: AdmissionRequest) -> bool:
        info = request.resource.info
        if self.limit_ranges is None or request.operation not in ("create", "update"):
            return False
        if request.old is not None and (request.old.get("metadata") or {}).get("deletionTimestamp"):
            return False
        # A pod's containers cannot change once created: its updates are not looked at.
        return (info is catalog.POD and request.operation == "create") or info is catalog.PERSISTENT_VOLUME_CLAIM

    def _ranges(self, request: AdmissionRequest) -> list[dict[str, Any]]:
        assert self.limit_ranges is not None
        namespace = request.obj["metadata"].get("namespace") or ""
        return [o.obj for o in namespace_objects(self.context, self.limit_ranges, namespace)]

    def mutate(self, request: AdmissionRequest) -> None:
        """A pod's containers get the defaults they lack (Kubernetes' Admit)."""
        if not self._applies(request) or request.resource.info is not catalog.POD:
            return
        for limit_range in self._ranges(request):
            default_pod(limit_range, request.obj)

    def validate(self, request: AdmissionRequest) -> None:
        """403 Forbidden when a limit range is exceeded (Kubernetes' Validate)."""
        if not self._applies(request):
            return
        violations = pod_violations if request.resource.info is catalog.POD else claim_violations
        for limit_range in self._ranges(request):
            failures = violations(limit_range, request.obj)
            if failures:
                raise forbidden(request.resource, request.obj, aggregate(failures))
