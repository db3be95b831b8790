"""The `batch/v1` kinds (Job, CronJob) and `autoscaling` HorizontalPodAutoscaler (one stored version served
as `v2` and `v1`).

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`).
"""

from runtime.server.kinds.batch.job import JobStrategy
from runtime.server.kinds.batch.cronjob import CronJobStrategy
from runtime.server.kinds.batch.hpa import HorizontalPodAutoscalerStrategy, HorizontalPodAutoscalerV1Strategy

__all__ = ["JobStrategy", "CronJobStrategy", "HorizontalPodAutoscalerStrategy", "HorizontalPodAutoscalerV1Strategy"]
