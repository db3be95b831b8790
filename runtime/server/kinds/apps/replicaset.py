"""apps/v1 `ReplicaSet` (Kubernetes' `pkg/registry/apps/replicaset`), served as with no controller behind it.

- Defaults (`SetDefaults_ReplicaSet`): `replicas` 1; the pod template's (podspec).
- Validation (`ValidateReplicaSetSpec`): `replicas` and `minReadySeconds`
  >= 0; the selector required, valid and not empty (Kubernetes' message
  says `empty selector is invalid for deployment` here too), matching the
  template's labels; the pod template (podspec), with `restartPolicy`
  Always and no `activeDeadlineSeconds`.
- Update: the selector is immutable; `metadata.generation` counts spec changes.
- Status (`ValidateReplicaSetStatus`): counters >= 0, `fullyLabeledReplicas`,
  `readyReplicas` and `availableReplicas` at most `replicas`,
  `availableReplicas` at most `readyReplicas`; `status.replicas` is always
  written (0 on create).
- `scale`: an autoscaling/v1 Scale (`runtime.server.kinds.apps.scale`).
- `kubectl get`: NAME, DESIRED, CURRENT, READY, AGE; `-o wide` CONTAINERS,
  IMAGES, SELECTOR (`FormatLabelSelector`).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, nonnegative
from runtime.server.kinds.apps.gosyntax import go_label_selector
from runtime.server.kinds.apps.printing import CONTAINERS_COLUMN, IMAGES_COLUMN, container_cells, count, format_selector
from runtime.server.kinds.apps.rules import (
    as_selector, replica_template_errors, selector_errors, template_label_errors,
)
from runtime.server.kinds.apps.scale import ReplicasScale
from runtime.server.kinds.apps.status import OVER_REPLICAS, StatusRules
from runtime.server.kinds.apps.workload import WorkloadStrategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["ReplicaSetStrategy"]


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    return [meta.get("name", ""), count(spec, "replicas"), count(status, "replicas"), count(status, "readyReplicas"),
            age(meta.get("creationTimestamp")), *container_cells(obj), format_selector(spec.get("selector"))]


_COLUMNS = Columns((
    NAME_COLUMN,
    column("Desired", "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit "
                      "zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/"
                      "controllers/replicationcontroller/#what-is-a-replicationcontroller", type_="integer"),
    column("Current", "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/"
                      "docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
           type_="integer"),
    column("Ready", "readyReplicas is the number of pods targeted by this ReplicaSet with a Ready Condition.",
           type_="integer"),
    AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN,
    column("Selector", "Selector is a label query over pods that should match the replica count. Label keys and "
                       "values that must match in order to be controlled by this replica set. It must match the pod "
                       "template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-"
                       "objects/labels/#label-selectors", priority=1),
), _cells)


class ReplicaSetStrategy(WorkloadStrategy):
    """See the module doc."""

    subresources = {"status": StatusSubresource(), "scale": ReplicasScale("replicasets")}
    columns = _COLUMNS
    warns_pod_names = True
    status_rules = StatusRules(
        ("replicas",), ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration"),
        (("fullyLabeledReplicas", "replicas", OVER_REPLICAS), ("readyReplicas", "replicas", OVER_REPLICAS),
         ("availableReplicas", "replicas", OVER_REPLICAS),
         ("availableReplicas", "readyReplicas", "cannot be greater than readyReplicas")))

    def default_spec(self, spec: dict[str, Any]) -> None:
        spec.setdefault("replicas", 1)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        template = spec.get("template") or {}
        errs = nonnegative(spec.get("replicas"), "spec.replicas")
        errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
        errs += selector_errors(spec, "spec", "deployment")  # sic: Kubernetes' ReplicaSet rule says deployment
        selector = as_selector(spec.get("selector"))
        if selector is None:
            errs.append(invalid("spec.selector", go_label_selector(spec.get("selector")), "invalid label selector"))
            return errs
        return errs + template_label_errors(template, selector, "spec.template") + replica_template_errors(
            template, "spec.template", "ReplicaSet")
