"""The built-in admission plug-ins, which the registry runs on every write of every kind: Kubernetes'
`LimitRanger` and `ResourceQuota` (enabled by default in kube-apiserver, so always on here).

Contract: `BuiltinAdmission(context)` over the registry (`AdmissionContext`:
its scheme, watch cache and store) has two steps, in Kubernetes' order:
`mutate(request)` after the kind's own admission and before validation
(LimitRanger's defaults), `validate(request)` after validation and the
user's plug-ins (LimitRanger's bounds, then ResourceQuota, last, which
charges the quotas). Both are for the main resource of a create or update
only (a subresource write passes). Refusals are 403 Forbidden in
Kubernetes' words (`limitranger`, `resourcequota`); what objects charge to
quota is `runtime.machinery.quota`.
"""

from __future__ import annotations

from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.limitranger import LimitRanger
from runtime.server.admission.resourcequota import ResourceQuotaAdmission
from runtime.server.kinds import AdmissionRequest

__all__ = ["BuiltinAdmission", "AdmissionContext", "LimitRanger", "ResourceQuotaAdmission"]


class BuiltinAdmission:
    """LimitRanger and ResourceQuota over `context` (see the module doc)."""

    def __init__(self, context: AdmissionContext) -> None:
        self.limit_ranger = LimitRanger(context)
        self.resource_quota = ResourceQuotaAdmission(context)

    async def mutate(self, request: AdmissionRequest, *, subresource: bool = False) -> None:
        """The mutating plug-ins (before validation)."""
        if not subresource:
            self.limit_ranger.mutate(request)

    async def validate(self, request: AdmissionRequest, *, subresource: bool = False) -> None:
        """The validating plug-ins, ResourceQuota last (after validation and the user's plug-ins)."""
        if subresource:
            return
        self.limit_ranger.validate(request)
        await self.resource_quota.validate(request)
