"""apps/v1 `DaemonSet` (Kubernetes' `pkg/registry/apps/daemonset`), served as with no controller behind it.

- Defaults (`SetDefaults_DaemonSet`): `updateStrategy.type` RollingUpdate,
  whose `rollingUpdate` gets `maxUnavailable` 1 and `maxSurge` 0;
  `revisionHistoryLimit` 10; the pod template's (podspec).
- The template generation: apps/v1 carries Kubernetes' internal
  `templateGeneration` as the annotation `deprecated.daemonset.template.generation`,
  which the server keeps: "1" on create, one more on each update that
  changes the template (what a client sends there is not kept).
- Validation (`ValidateDaemonSetSpec`): the selector valid, matching the
  template's labels (a missing one matches nothing) and not empty (`empty
  selector is invalid for daemonset`); the pod template (podspec), with
  `restartPolicy` Always and no `activeDeadlineSeconds`; `minReadySeconds`
  and `revisionHistoryLimit` >= 0; `updateStrategy` RollingUpdate (with a
  `rollingUpdate` whose `maxUnavailable` and `maxSurge` are non-negative
  integers or percents up to 100%, exactly one of them not 0) or OnDelete.
- Update: the selector is immutable; `metadata.generation` counts spec changes.
- Status (`validateDaemonSetStatus`): counters >= 0; the four scheduled and
  ready counts are always written (0 on create); `collisionCount` never lower.
- `kubectl get`: NAME, DESIRED, CURRENT, READY, UP-TO-DATE, AVAILABLE, NODE
  SELECTOR, AGE; `-o wide` CONTAINERS, IMAGES, SELECTOR.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError, label_selector_errors
from runtime.machinery.validation.fielderrors import invalid, nonnegative, not_supported, required
from runtime.server.kinds.apps.gosyntax import go_int_or_string, go_label_selector, go_strategy
from runtime.server.kinds.apps.printing import (
    CONTAINERS_COLUMN, IMAGES_COLUMN, container_cells, count, format_labels, format_selector,
)
from runtime.server.kinds.apps.rules import (
    as_selector, int_or_percent_errors, int_or_percent_value, more_than_100_percent,
    replica_template_errors, semantically_equal, template_label_errors,
)
from runtime.server.kinds.apps.status import StatusRules
from runtime.server.kinds.apps.workload import WorkloadStrategy, default_rolling_update
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import Subresource

__all__ = ["DaemonSetStrategy", "TEMPLATE_GENERATION"]

#: apps/v1's home of the internal `spec.templateGeneration` (`appsv1.DeprecatedTemplateGeneration`).
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
_DOC = "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    node_selector = ((spec.get("template") or {}).get("spec") or {}).get("nodeSelector")
    return [meta.get("name", ""), count(status, "desiredNumberScheduled"), count(status, "currentNumberScheduled"),
            count(status, "numberReady"), count(status, "updatedNumberScheduled"), count(status, "numberAvailable"),
            format_labels(node_selector), age(meta.get("creationTimestamp")), *container_cells(obj),
            format_selector(spec.get("selector"))]


_COLUMNS = Columns((
    NAME_COLUMN,
    column("Desired", "The total number of nodes that should be running the daemon pod (including nodes correctly "
                      f"running the daemon pod). More info: {_DOC}", type_="integer"),
    column("Current", "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon "
                      f"pod. More info: {_DOC}", type_="integer"),
    column("Ready", "numberReady is the number of nodes that should be running the daemon pod and have one or more "
                    "of the daemon pod running with a Ready Condition.", type_="integer"),
    column("Up-to-date", "The total number of nodes that are running updated daemon pod", type_="integer"),
    column("Available", "The number of nodes that should be running the daemon pod and have one or more of the "
                        "daemon pod running and available (ready for at least spec.minReadySeconds)",
           type_="integer"),
    column("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node. Selector "
                            "which must match a node's labels for the pod to be scheduled on that node. More info: "
                            "https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"),
    AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN,
    column("Selector", "A label query over pods that are managed by the daemon set. Must match in order to be "
                       "controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/"
                       "concepts/overview/working-with-objects/labels/#label-selectors", priority=1),
), _cells)


def _update_strategy_errors(strategy: dict[str, Any]) -> list[FieldError]:
    """`ValidateDaemonSetUpdateStrategy` and `ValidateRollingUpdateDaemonSet`."""
    path = "spec.updateStrategy"
    kind = strategy.get("type")
    if kind == "OnDelete":
        return []
    if kind != "RollingUpdate":
        return [not_supported(path, go_strategy("DaemonSetUpdateStrategy", "RollingUpdateDaemonSet", strategy),
                              ["RollingUpdate", "OnDelete"])]
    rolling = strategy.get("rollingUpdate")
    if rolling is None:
        return [required(f"{path}.rollingUpdate")]
    path = f"{path}.rollingUpdate"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs = int_or_percent_errors(unavailable, f"{path}.maxUnavailable")
    errs += int_or_percent_errors(surge, f"{path}.maxSurge")
    errs += more_than_100_percent(unavailable, f"{path}.maxUnavailable")
    errs += more_than_100_percent(surge, f"{path}.maxSurge")
    has_unavailable, has_surge = int_or_percent_value(unavailable) != 0, int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        errs.append(invalid(f"{path}.maxSurge", go_int_or_string(surge), "may not be set when maxUnavailable is "
                                                                         "non-zero"))
    elif not has_unavailable and not has_surge:
        errs.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def _template_generation(obj: dict[str, Any]) -> int:
    value = (obj["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION, "")
    return int(value) if value.isdigit() else 0


def _set_template_generation(obj: dict[str, Any], generation: int) -> None:
    obj["metadata"]["annotations"] = {**(obj["metadata"].get("annotations") or {}),
                                      TEMPLATE_GENERATION: str(generation)}


class DaemonSetStrategy(WorkloadStrategy):
    """See the module doc."""

    columns = _COLUMNS
    status_rules = StatusRules(
        ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady"),
        ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady", "observedGeneration",
         "updatedNumberScheduled", "numberAvailable", "numberUnavailable", "collisionCount"))

    def default_spec(self, spec: dict[str, Any]) -> None:
        default_rolling_update(spec, "updateStrategy", maxUnavailable=1, maxSurge=0)
        spec.setdefault("revisionHistoryLimit", 10)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        _set_template_generation(obj, max(_template_generation(obj), 1))

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)
        generation = _template_generation(old)
        if not semantically_equal((new.get("spec") or {}).get("template"), (old.get("spec") or {}).get("template")):
            generation += 1
        _set_template_generation(new, generation)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        template = spec.get("template") or {}
        raw = spec.get("selector")
        errs = label_selector_errors(raw, "spec.selector") if raw is not None else []
        selector = as_selector(raw)
        if selector is not None:  # a missing selector is Kubernetes' labels.Nothing: it matches no labels
            errs += template_label_errors(template, selector, "spec.template")
        if raw is not None and not (raw.get("matchLabels") or raw.get("matchExpressions")):
            errs.append(invalid("spec.selector", go_label_selector(raw), "empty selector is invalid for daemonset"))
        errs += replica_template_errors(template, "spec.template", "DaemonSet")
        errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        errs += _update_strategy_errors(spec.get("updateStrategy") or {})
        return errs + nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")
