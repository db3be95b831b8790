"""apps/v1 `StatefulSet` (Kubernetes' `pkg/registry/apps/statefulset`), served as with no controller behind it.

- Defaults (`SetDefaults_StatefulSet`, v1.28's gates): `podManagementPolicy`
  OrderedReady; `updateStrategy.type` RollingUpdate with `rollingUpdate:
  {partition: 0}` (a RollingUpdate one given without `partition` gets 0);
  `persistentVolumeClaimRetentionPolicy` Retain/Retain (StatefulSetAutoDeletePVC,
  beta); `replicas` 1; `revisionHistoryLimit` 10; `serviceName` "" (Go writes
  it even when empty: v1.28 has no `omitempty` there, and no rule needs it
  set); each `volumeClaimTemplates` entry a PersistentVolumeClaim's defaults
  (`volumeMode` Filesystem, `status.phase` Pending, quantities canonical);
  the pod template's (podspec). `rollingUpdate.maxUnavailable` is dropped
  unless the stored object has one (MaxUnavailableStatefulSet is alpha, off).
- Validation (`ValidateStatefulSetSpec`): names are DNS labels (since
  v1.27; an update leaves a stored name alone);
  `podManagementPolicy` OrderedReady or Parallel; `updateStrategy`
  RollingUpdate (partition >= 0) or OnDelete (no `rollingUpdate`: `only
  allowed for updateStrategy 'RollingUpdate'`); the retention policy's
  `whenDeleted`, `whenScaled` Retain or Delete; `replicas`,
  `minReadySeconds`, `ordinals.start` >= 0; the selector required, valid,
  not empty (`empty selector is invalid for statefulset`) and matching the
  template's labels; the template's labels and annotations (its pod spec is
  not checked: Kubernetes leaves it out, the volumes of claims being
  unknown to it), `restartPolicy` Always and no `activeDeadlineSeconds`.
- Update: only `replicas`, `ordinals`, `template`, `updateStrategy`,
  `persistentVolumeClaimRetentionPolicy` and `minReadySeconds` may change
  (`spec: Forbidden: updates to statefulset spec for fields other than ...
  are forbidden`), so the selector too is immutable; `metadata.generation`
  counts spec changes.
- Status (`ValidateStatefulSetStatus`): counters >= 0, `readyReplicas`,
  `currentReplicas`, `updatedReplicas`, `availableReplicas` at most
  `replicas`, `availableReplicas` at most `readyReplicas`; `replicas` and
  `availableReplicas` always written; `collisionCount` never lower.
- `scale`: an autoscaling/v1 Scale (`runtime.server.kinds.apps.scale`).
- `kubectl get`: NAME, READY (`ready/desired`), AGE; `-o wide` CONTAINERS, IMAGES.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from runtime.machinery.quantity import Quantity, QuantityError, parse_quantity
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, nonnegative, not_supported, required
from runtime.machinery.validation.gofmt import GoText, go_quote
from runtime.machinery.validation.names import label_value_errors, qualified_name_errors
from runtime.server.kinds.apps.gosyntax import go_label_selector
from runtime.server.kinds.apps.printing import CONTAINERS_COLUMN, IMAGES_COLUMN, READY_DOC, container_cells, count
from runtime.server.kinds.apps.rules import (
    as_selector, selector_errors, semantically_equal, template_label_errors,
)
from runtime.server.kinds.apps.scale import ReplicasScale
from runtime.server.kinds.apps.status import OVER_REPLICAS, StatusRules
from runtime.server.kinds.apps.workload import WorkloadStrategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import StatusSubresource, Subresource

__all__ = ["StatefulSetStrategy"]

#: What an update may change (`ValidateStatefulSetUpdate`); the rest of the spec is fixed.
_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds")
_FORBIDDEN_UPDATE = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                     "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")
_RETENTION = ["Retain", "Delete"]


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    return [meta.get("name", ""), f"{count(status, 'readyReplicas')}/{count(spec, 'replicas')}",
            age(meta.get("creationTimestamp")), *container_cells(obj)]


_COLUMNS = Columns((NAME_COLUMN, column("Ready", READY_DOC), AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN), _cells)


def _default_claim_template(claim: Any) -> None:
    """SetDefaults_PersistentVolumeClaim and its spec's, and SetDefaults_ResourceList (canonical quantities)."""
    if not isinstance(claim, dict):
        return
    spec = claim.get("spec")
    if not isinstance(spec, dict):
        spec = claim["spec"] = {}
    spec.setdefault("volumeMode", "Filesystem")
    for section in ("limits", "requests"):
        quantities = (spec.get("resources") or {}).get(section)
        if isinstance(quantities, dict):
            spec["resources"][section] = {name: _canonical(q) for name, q in quantities.items()}
    status = claim.get("status")
    if not isinstance(status, dict):
        status = claim["status"] = {}
    if not status.get("phase"):
        status["phase"] = "Pending"


def _canonical(quantity: Any) -> Any:
    """SetDefaults_ResourceList: rounded up to milli units, in canonical form."""
    if not isinstance(quantity, str):
        return quantity
    try:
        parsed = parse_quantity(quantity)
    except QuantityError:
        return quantity  # validation of claims is the PersistentVolumeClaim kind's
    return str(Quantity(Fraction(parsed.milli(), 1000), parsed.format)) if parsed.value > 0 else str(parsed)


def _rolling_update_text(rolling: dict[str, Any]) -> GoText:
    pointer = "nil" if rolling.get("maxUnavailable") is None else "0xc000010000"
    return GoText(f"apps.RollingUpdateStatefulSetStrategy{{Partition:{count(rolling, 'partition')}, "
                  f"MaxUnavailable:(*intstr.IntOrString)({pointer})}}")


def _update_strategy_errors(strategy: dict[str, Any]) -> list[FieldError]:
    path = "spec.updateStrategy"
    kind, rolling = strategy.get("type") or "", strategy.get("rollingUpdate")
    if kind == "":
        return [required(path)]
    if kind == "OnDelete":
        if rolling is not None:
            return [invalid(f"{path}.rollingUpdate", _rolling_update_text(rolling),
                            "only allowed for updateStrategy 'RollingUpdate'")]
        return []
    if kind == "RollingUpdate":
        return nonnegative(rolling.get("partition"), f"{path}.rollingUpdate.partition") if rolling else []
    pointer = "nil" if rolling is None else "0xc000010000"
    shown = GoText(f"apps.StatefulSetUpdateStrategy{{Type:{go_quote(kind)}, "
                   f"RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)({pointer})}}")
    return [invalid(path, shown, "must be 'RollingUpdate' or 'OnDelete'")]


def _template_meta_errors(template: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidatePodTemplateSpecForStatefulSet`'s labels and annotations (at `spec.template.labels`, as Kubernetes
    writes the path)."""
    meta = template.get("metadata") or {}
    errs: list[FieldError] = []
    for key, value in (meta.get("labels") or {}).items():
        errs += [invalid(f"{path}.labels", key, p) for p in qualified_name_errors(key)]
        errs += [invalid(f"{path}.labels", value, p) for p in label_value_errors(value)]
    for key in meta.get("annotations") or {}:
        errs += [invalid(f"{path}.annotations", key, p) for p in qualified_name_errors(key.lower())]
    return errs


class StatefulSetStrategy(WorkloadStrategy):
    """See the module doc."""

    name_rule = "dns-label"  # the pods' hostnames are named after it (since v1.27)
    stored_name_rule = "dns-subdomain"  # v1.26's rule: an update of an older one still passes
    subresources = {"status": StatusSubresource(), "scale": ReplicasScale("statefulsets")}
    columns = _COLUMNS
    status_rules = StatusRules(
        ("replicas", "availableReplicas"),
        ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas", "observedGeneration",
         "collisionCount"),
        (("readyReplicas", "replicas", OVER_REPLICAS), ("currentReplicas", "replicas", OVER_REPLICAS),
         ("updatedReplicas", "replicas", OVER_REPLICAS), ("availableReplicas", "replicas", OVER_REPLICAS),
         ("availableReplicas", "readyReplicas", "cannot be greater than status.readyReplicas")))

    def default_spec(self, spec: dict[str, Any]) -> None:
        if not spec.get("podManagementPolicy"):  # Go's "" is unset too
            spec["podManagementPolicy"] = "OrderedReady"
        strategy = spec.get("updateStrategy")
        if not isinstance(strategy, dict):
            strategy = spec["updateStrategy"] = {}
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            if strategy.get("rollingUpdate") is None:
                strategy["rollingUpdate"] = {}
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            rolling.setdefault("partition", 0)
        policy = spec.get("persistentVolumeClaimRetentionPolicy")
        if not isinstance(policy, dict):
            policy = spec["persistentVolumeClaimRetentionPolicy"] = {}
        for when in ("whenDeleted", "whenScaled"):
            if not policy.get(when):
                policy[when] = "Retain"
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("serviceName", "")
        for claim in spec.get("volumeClaimTemplates") or []:
            _default_claim_template(claim)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        _drop_max_unavailable(obj, None)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)
        _drop_max_unavailable(new, old)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        template = spec.get("template") or {}
        errs: list[FieldError] = []
        policy = spec.get("podManagementPolicy") or ""
        if policy == "":
            errs.append(required("spec.podManagementPolicy"))
        elif policy not in ("OrderedReady", "Parallel"):
            errs.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
        errs += _update_strategy_errors(spec.get("updateStrategy") or {})
        retention = spec.get("persistentVolumeClaimRetentionPolicy")
        if isinstance(retention, dict):
            for when in ("whenDeleted", "whenScaled"):
                if retention.get(when) not in _RETENTION:
                    errs.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{when}",
                                              retention.get(when) or "", _RETENTION))
        errs += nonnegative(spec.get("replicas"), "spec.replicas")
        errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        errs += nonnegative((spec.get("ordinals") or {}).get("start"), "spec.ordinals.start")
        errs += selector_errors(spec, "spec", "statefulset")
        selector = as_selector(spec.get("selector"))
        if selector is None:
            errs.append(invalid("spec.selector", go_label_selector(spec.get("selector")), ""))
        else:
            errs += template_label_errors(template, selector, "spec.template")
            errs += _template_meta_errors(template, "spec.template")
        pod = template.get("spec") or {}
        restart = pod.get("restartPolicy", "Always")  # Always is SetDefaults_PodSpec's value
        if restart != "Always":
            errs.append(not_supported("spec.template.spec.restartPolicy", restart, ["Always"]))
        if pod.get("activeDeadlineSeconds") is not None:
            errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                                  "activeDeadlineSeconds in StatefulSet is not Supported"))
        return errs

    def validate_spec_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        # The stored spec as Kubernetes reads it, defaulted (one stored before a default was known compares equal).
        stored = copy.deepcopy(old.get("spec") or {})
        self.default_spec(stored)
        fixed = [{k: v for k, v in spec.items() if k not in _MUTABLE} for spec in (new.get("spec") or {}, stored)]
        return [] if semantically_equal(*fixed) else [forbidden("spec", _FORBIDDEN_UPDATE)]


def _drop_max_unavailable(new: dict[str, Any], old: dict[str, Any] | None) -> None:
    """MaxUnavailableStatefulSet is off in v1.28: `maxUnavailable` is kept only when the stored object has one."""
    def rolling(obj: dict[str, Any] | None) -> dict[str, Any]:
        found = ((((obj or {}).get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate"))
        return found if isinstance(found, dict) else {}
    if rolling(old).get("maxUnavailable") is None:
        rolling(new).pop("maxUnavailable", None)
