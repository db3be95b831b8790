"""`autoscaling` HorizontalPodAutoscaler: one stored object served as `autoscaling/v2` (the storage version)
and `autoscaling/v1`, as kube-apiserver v1.28 serves it with no autoscaler behind it
(`pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go`).

- v2 (`HorizontalPodAutoscalerStrategy`): the defaults and rules of `runtime.server.kinds.batch.hparules`;
  the status is cleared on create and written by `status` only; no generation is counted (Kubernetes'
  strategy leaves it alone); a PUT of a missing HPA is 404; names are DNS subdomains.
- v1 (`HorizontalPodAutoscalerV1Strategy`): a v1 write is defaulted as v1 (minReplicas 1), converted to v2
  (`runtime.server.kinds.batch.hpaconversion`), defaulted as v2 is when read from storage, and then is the
  v2 write in everything (its rules, and their field paths, are the v2 object's, as Kubernetes validates the
  internal type); every read (get, list, watch, a write's answer) converts the stored object to v1. Both
  versions list and watch the same objects.
- `kubectl get` (both): NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.storedobject import StoredObject
from runtime.machinery.validation import FieldError, validate_object_meta
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.batch.hpaconversion import to_v1, to_v2
from runtime.server.kinds.batch.hparules import default_v2, hpa_cells, hpa_errors
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, column
from runtime.server.kinds.subresources import StatusSubresource, Subresource

__all__ = ["HorizontalPodAutoscalerStrategy", "HorizontalPodAutoscalerV1Strategy"]

_COLUMNS = (
    NAME_COLUMN,
    column("Reference", "reference to scaled resource; horizontal pod autoscaler will learn the current resource "
                        "consumption and will set the desired number of pods by using its Scale subresource."),
    column("Targets", "metrics contains the specifications for which to use to calculate the desired replica count "
                      "(the maximum replica count across all metrics will be used).  The desired replica count is "
                      "calculated multiplying the ratio between the target value and the current value by the "
                      "current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and "
                      "vice-versa.  See the individual metric source types for more information about how each type "
                      "of metric must respond."),
    column("MinPods", "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale "
                      "down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate "
                      "HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling "
                      "is active as long as at least one metric value is available."),
    column("MaxPods", "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale "
                      "up. It cannot be less that minReplicas."),
    column("Replicas", "currentReplicas is current number of replicas of pods managed by this autoscaler, as last "
                       "seen by the autoscaler."),
    AGE_COLUMN,
)


class HorizontalPodAutoscalerStrategy(Strategy):
    """The stored version, autoscaling/v2 (see the module doc)."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    subresources = {"status": StatusSubresource()}
    columns = Columns(_COLUMNS, hpa_cells)

    def default(self, obj: dict[str, Any]) -> None:
        default_v2(obj)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        obj.pop("status", None)
        super().prepare_for_create(obj)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        default_v2(new)
        super().prepare_for_update(new, old, subresource)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        return hpa_errors(obj, 1)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        # HPAScaleToZero is off in 1.28: 0 stays allowed for an HPA that already has it.
        bound = 0 if (old.get("spec") or {}).get("minReplicas") == 0 else 1
        meta = validate_object_meta(new["metadata"], namespaced=True, name_rule=self.name_rule)
        return meta + hpa_errors(new, bound)


class HorizontalPodAutoscalerV1Strategy(HorizontalPodAutoscalerStrategy):
    """autoscaling/v1, served from the v2 storage (see the module doc)."""

    converts = True
    columns = Columns(_COLUMNS, lambda obj: hpa_cells(to_v2(obj) if obj.get("apiVersion") == "autoscaling/v1" else obj))

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("minReplicas") is None:
            spec["minReplicas"] = 1

    def _stored(self, obj: dict[str, Any]) -> None:
        """`obj`, a v1 object, made the v2 one it is stored as, in place."""
        self.default(obj)
        converted = to_v2(obj)
        default_v2(converted)
        obj.clear()
        obj.update(converted)

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        self._stored(obj)
        super().prepare_for_create(obj)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        self._stored(new)
        super().prepare_for_update(new, old, subresource)

    def present(self, obj: StoredObject) -> StoredObject:
        """The stored v2 object as autoscaling/v1 shows it."""
        if obj.obj.get("kind") != self.rt.kind or obj.obj.get("apiVersion") == self.rt.api_version:
            return obj
        return StoredObject(obj.key, to_v1(obj.obj), obj.revision)
