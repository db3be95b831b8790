"""Admission: the plug-ins the registry runs on every write of every kind, in Kubernetes' order
(`chain.AdmissionChain`): the built-in `LimitRanger` and `ResourceQuota` (enabled by default in
kube-apiserver, so always on here) around the dynamic steps (webhooks, CEL policies, Python admission).

Contract: `AdmissionChain(context, mutating=..., validating=...)` over the
registry (`AdmissionContext`: its scheme, watch cache, store, authorizer,
webhook client and metrics) has two steps: `mutate(request)` after the
kind's own admission and before validation, `validate(request)` after
validation and the user's plug-ins (ResourceQuota last, which charges the
quotas). Refusals are StatusErrors in Kubernetes' words (`limitranger`,
`resourcequota`: 403 Forbidden); what objects charge to quota is
`runtime.machinery.quota`. `webhookclient` calls webhooks (admission and
CRD conversion alike); `metrics` are kube's admission metrics.
"""

from runtime.server.admission.chain import AdmissionChain, MutatingStep, ValidatingStep
from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.limitranger import LimitRanger
from runtime.server.admission.metrics import AdmissionMetrics
from runtime.server.admission.resourcequota import ResourceQuotaAdmission
from runtime.server.admission.webhookclient import CacheServiceResolver, WebhookCallError, WebhookClient

__all__ = ["AdmissionChain", "AdmissionContext", "MutatingStep", "ValidatingStep", "LimitRanger",
           "ResourceQuotaAdmission", "AdmissionMetrics", "WebhookClient", "WebhookCallError", "CacheServiceResolver"]
