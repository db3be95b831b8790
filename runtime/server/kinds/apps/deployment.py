"""apps/v1 `Deployment` (Kubernetes' `pkg/registry/apps/deployment`), served as with no controller behind it.

- Defaults (`SetDefaults_Deployment`): `replicas` 1; `strategy.type`
  RollingUpdate, whose `rollingUpdate` gets `maxUnavailable` and `maxSurge`
  25%; `revisionHistoryLimit` 10; `progressDeadlineSeconds` 600; the pod
  template's defaults (podspec).
- Validation (`ValidateDeploymentSpec`): `replicas` >= 0; the selector
  required, valid and not empty (`empty selector is invalid for deployment`),
  matching the template's labels; the pod template (podspec), with
  `restartPolicy` Always and no `activeDeadlineSeconds`; the strategy:
  `Recreate` or `RollingUpdate` (`Unsupported value: apps.DeploymentStrategy{...}`),
  Recreate without `rollingUpdate` (`may not be specified when strategy
  `type` is 'Recreate'`), `maxUnavailable` and `maxSurge` non-negative
  integers or percents, not both 0 (`may not be 0 when `maxSurge` is 0`),
  `maxUnavailable` at most 100%; `minReadySeconds`, `revisionHistoryLimit`
  >= 0; `progressDeadlineSeconds` >= 0 and greater than `minReadySeconds`.
- Update: the selector is immutable; `metadata.generation` counts changes of
  the spec and of the annotations (which a Deployment's controller copies to
  its ReplicaSets).
- Status (`ValidateDeploymentStatus`): counters >= 0, `updatedReplicas`,
  `readyReplicas`, `availableReplicas` at most `replicas`,
  `availableReplicas` at most `readyReplicas`; `collisionCount` never lower.
- `scale`: an autoscaling/v1 Scale (`runtime.server.kinds.apps.scale`).
- `kubectl get`: NAME, READY (`ready/desired`), UP-TO-DATE, AVAILABLE, AGE;
  `-o wide` CONTAINERS, IMAGES, SELECTOR.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, nonnegative, not_supported, required
from runtime.server.kinds.apps.gosyntax import go_int_or_string, go_label_selector, go_strategy
from runtime.server.kinds.apps.printing import CONTAINERS_COLUMN, IMAGES_COLUMN, READY_DOC, container_cells, count
from runtime.server.kinds.apps.rules import (
    as_selector, int_or_percent_errors, int_or_percent_value, more_than_100_percent,
    replica_template_errors, selector_errors, template_label_errors,
)
from runtime.server.kinds.apps.scale import ReplicasScale
from runtime.server.kinds.apps.status import OVER_REPLICAS, StatusRules
from runtime.server.kinds.apps.workload import WorkloadStrategy, default_rolling_update
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.parts import spec_of
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["DeploymentStrategy"]

_STRATEGIES = ["Recreate", "RollingUpdate"]


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    selector = as_selector(spec.get("selector"))
    return [meta.get("name", ""), f"{count(status, 'readyReplicas')}/{count(spec, 'replicas')}",
            count(status, "updatedReplicas"), count(status, "availableReplicas"), age(meta.get("creationTimestamp")),
            *container_cells(obj), "<invalid>" if selector is None else str(selector)]


_COLUMNS = Columns((
    NAME_COLUMN, column("Ready", READY_DOC),
    column("Up-to-date", "Total number of non-terminated pods targeted by this deployment that have the desired "
                         "template spec."),
    column("Available", "Total number of available pods (ready for at least minReadySeconds) targeted by this "
                        "deployment."),
    AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN,
    column("Selector", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
                       "ones affected by this deployment. It must match the pod template's labels.", priority=1),
), _cells)


def _strategy_errors(strategy: dict[str, Any]) -> list[FieldError]:
    """`ValidateDeploymentStrategy` and `ValidateRollingUpdateDeployment`."""
    path = "spec.strategy"
    kind, rolling = strategy.get("type"), strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [forbidden(f"{path}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if kind != "RollingUpdate":
        return [not_supported(path, go_strategy("DeploymentStrategy", "RollingUpdateDeployment", strategy),
                              _STRATEGIES)]
    if rolling is None:
        return [required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")]
    path = f"{path}.rollingUpdate"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs = int_or_percent_errors(unavailable, f"{path}.maxUnavailable")
    errs += int_or_percent_errors(surge, f"{path}.maxSurge")
    if int_or_percent_value(unavailable) == 0 and int_or_percent_value(surge) == 0:
        errs.append(invalid(f"{path}.maxUnavailable", go_int_or_string(unavailable),
                            "may not be 0 when `maxSurge` is 0"))
    return errs + more_than_100_percent(unavailable, f"{path}.maxUnavailable")


class DeploymentStrategy(WorkloadStrategy):
    """See the module doc."""

    subresources = {"status": StatusSubresource(), "scale": ReplicasScale("deployments")}
    columns = _COLUMNS
    warns_pod_names = True
    status_rules = StatusRules(
        (), ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
             "unavailableReplicas", "collisionCount"),
        (("updatedReplicas", "replicas", OVER_REPLICAS), ("readyReplicas", "replicas", OVER_REPLICAS),
         ("availableReplicas", "replicas", OVER_REPLICAS),
         ("availableReplicas", "readyReplicas", "cannot be greater than readyReplicas")))

    def default_spec(self, spec: dict[str, Any]) -> None:
        spec.setdefault("replicas", 1)
        default_rolling_update(spec, "strategy", maxUnavailable="25%", maxSurge="25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)

    def counted(self, obj: dict[str, Any]) -> dict[str, Any]:
        # Kubernetes' PrepareForUpdate: annotation changes bump the generation too.
        return {**spec_of(obj), "annotations": obj["metadata"].get("annotations") or {}}

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        template = spec.get("template") or {}
        errs = nonnegative(spec.get("replicas"), "spec.replicas")
        errs += selector_errors(spec, "spec", "deployment")
        selector = as_selector(spec.get("selector"))
        if selector is None:
            errs.append(invalid("spec.selector", go_label_selector(spec.get("selector")), "invalid label selector"))
        else:
            errs += template_label_errors(template, selector, "spec.template")
            errs += replica_template_errors(template, "spec.template", "Deployment")
        errs += _strategy_errors(spec.get("strategy") or {})
        errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        errs += nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
        deadline = spec.get("progressDeadlineSeconds")
        if isinstance(deadline, int):
            errs += nonnegative(deadline, "spec.progressDeadlineSeconds")
            if deadline <= count(spec, "minReadySeconds"):
                errs.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
        return errs
