"""`policy/v1` PodDisruptionBudget (Kubernetes' `pkg/registry/policy/poddisruptionbudget`,
`pkg/apis/policy/validation`), which a Pod's eviction consults (`eviction`).

- Validation (ValidatePodDisruptionBudgetSpec): `minAvailable` and
  `maxUnavailable` are not both set (`spec: Invalid value: ...: minAvailable
  and maxUnavailable cannot be both set`); each is a non-negative integer or
  a percent (`25%`) of at most 100%; the selector is a valid label selector;
  `unhealthyPodEvictionPolicy` is `AlwaysAllow` or `IfHealthyBudget`. Names
  follow apimachinery's rules only (a path segment).
- Create resets the status (its four counts 0); a write keeps the status,
  a `status` write the spec, and its counts are not negative. `metadata.generation` is 1 on create and counts spec changes (an
  eviction refuses a budget whose status has not observed it).
- `kubectl get`: NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE
  (`N/A` for the bound not set).
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError, label_selector_errors
from runtime.machinery.validation.fielderrors import invalid, not_supported
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["PodDisruptionBudgetStrategy", "int_or_percent_errors"]

_PERCENT = re.compile(r"[0-9]+%")
_PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                "regex used for validation is '[0-9]+%')")
_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]
_COUNTS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


def int_or_percent_errors(value: Any, path: str) -> list[FieldError]:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent on an IntOrString."""
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            return [invalid(path, value, _PERCENT_MSG)]
        return [invalid(path, value, "must not be greater than 100%")] if int(value[:-1]) > 100 else []
    return [invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []


def _cells(obj: dict[str, Any]) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    bounds = ["N/A" if spec.get(k) is None else str(spec[k]) for k in ("minAvailable", "maxUnavailable")]
    return [obj["metadata"].get("name", ""), *bounds, int(status.get("disruptionsAllowed") or 0),
            age(obj["metadata"].get("creationTimestamp"))]


class PodDisruptionBudgetStrategy(Strategy):
    """See the module doc."""

    counts_generation = True
    kube_finalizers = False
    subresources = {"status": StatusSubresource()}
    columns = Columns((
        NAME_COLUMN,
        column("Min Available", "The minimum number of pods that must be available simultaneously.  This can be "
                                "either an integer or a string specifying a percentage, e.g. \"28%\"."),
        column("Max Unavailable", "The maximum number of pods that may be unavailable simultaneously.  This can be "
                                  "either an integer or a string specifying a percentage, e.g. \"28%\"."),
        column("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.",
               type_="integer"),
        AGE_COLUMN,
    ), _cells)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        obj["status"] = {field: 0 for field in _COUNTS}  # an empty status: its counts are not omitempty

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        """The create rules, and ValidatePodDisruptionBudgetStatusUpdate's: the status counts are not negative."""
        status = new.get("status") or {}
        return self.validate(new) + [invalid(f"status.{field}", status[field], "must be greater than or equal to 0")
                                     for field in _COUNTS if int(status.get(field) or 0) < 0]

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            errs.append(invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set"))
        for field in ("minAvailable", "maxUnavailable"):
            if spec.get(field) is not None:
                errs += int_or_percent_errors(spec[field], f"spec.{field}")
        if spec.get("selector") is not None:
            errs += label_selector_errors(spec["selector"], "spec.selector")
        policy = spec.get("unhealthyPodEvictionPolicy")
        if policy is not None and policy not in _EVICTION_POLICIES:
            errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, _EVICTION_POLICIES))
        return errs
