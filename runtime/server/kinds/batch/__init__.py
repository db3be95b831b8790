"""The `batch/v1` kinds (Job, CronJob) and `autoscaling` HorizontalPodAutoscaler (one stored version served
as `v2` and `v1`).

Contract: each kind's strategy (`runtime.server.kinds.Strategy`), named in `runtime.server.kinds.STRATEGIES`;
its rules are Kubernetes' (`pkg/apis/*/v1/defaults.go`, `pkg/apis/*/validation`, `pkg/registry/*/*/strategy.go`),
each listed in its module's doc. The surface is `__all__`; the modules are internal to this package.

Modules, one concept each: `job` (the Job's strategy) and `jobspec` (the Job spec a Job and a CronJob's
`jobTemplate` share: defaults, rules, cells); `cronjob` (the CronJob's strategy) and `cronschedule` (its
schedule's parser); `hpa` (the two HorizontalPodAutoscaler strategies), `hparules` (v2's defaults, rules and
cells) and `hpaconversion` (v2 to v1 and back).
"""

from runtime.server.kinds.batch.job import JobStrategy
from runtime.server.kinds.batch.cronjob import CronJobStrategy
from runtime.server.kinds.batch.hpa import HorizontalPodAutoscalerStrategy, HorizontalPodAutoscalerV1Strategy

__all__ = ["JobStrategy", "CronJobStrategy", "HorizontalPodAutoscalerStrategy", "HorizontalPodAutoscalerV1Strategy"]
