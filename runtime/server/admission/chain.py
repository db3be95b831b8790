"""The admission chain every write of every kind passes, in kube-apiserver's plug-in order.

`AdmissionChain(context, mutating=[...], validating=[...])`:
- `mutate(request)`, before the kind's validation: LimitRanger's defaults,
  then each mutating step in order (Kubernetes: MutatingAdmissionPolicy,
  then MutatingAdmissionWebhook). A step that wants the chain run again
  (a mutating webhook with `reinvocationPolicy: IfNeeded` whose object a
  later step changed) sets `request.state["reinvoke"]`; the whole mutating
  chain then runs once more with `request.state["reinvoking"]` True, as
  kube's reinvocation handler (each step decides which of its hooks run
  again).
- `validate(request)`, after validation: LimitRanger's bounds, each
  validating step (ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook),
  then ResourceQuota, last (it charges the quota).
LimitRanger and ResourceQuota see creates and updates of a main resource
only; the steps see every operation (create, update, delete) and
subresource, and decide what they match. A delete runs both phases (kube
calls mutating admission on DELETE too).
"""

from __future__ import annotations

from typing import Protocol, Sequence

from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.limitranger import LimitRanger
from runtime.server.admission.resourcequota import ResourceQuotaAdmission
from runtime.server.kinds import AdmissionRequest

__all__ = ["AdmissionChain", "MutatingStep", "ValidatingStep"]


class MutatingStep(Protocol):
    name: str

    async def mutate(self, request: AdmissionRequest) -> None:
        """Change `request.obj`, or raise a StatusError to refuse."""
        ...


class ValidatingStep(Protocol):
    name: str

    async def validate(self, request: AdmissionRequest) -> None:
        """Raise a StatusError to refuse `request` (never change the object)."""
        ...


class AdmissionChain:
    """The plug-ins around validation (see the module doc)."""

    def __init__(self, context: AdmissionContext, *, mutating: Sequence[MutatingStep] = (),
                 validating: Sequence[ValidatingStep] = ()) -> None:
        self.limit_ranger = LimitRanger(context)
        self.resource_quota = ResourceQuotaAdmission(context)
        self.mutating = tuple(mutating)
        self.validating = tuple(validating)

    @staticmethod
    def _builtin(request: AdmissionRequest) -> bool:
        return not request.subresource and request.operation in ("create", "update")

    async def mutate(self, request: AdmissionRequest) -> None:
        """The mutating plug-ins (before validation), reinvoked once if a step asks."""
        await self._mutate_once(request)
        if request.state.pop("reinvoke", False):
            request.state["reinvoking"] = True
            await self._mutate_once(request)

    async def _mutate_once(self, request: AdmissionRequest) -> None:
        if self._builtin(request):
            self.limit_ranger.mutate(request)
        for step in self.mutating:
            await step.mutate(request)

    async def validate(self, request: AdmissionRequest) -> None:
        """The validating plug-ins, ResourceQuota last (after validation and the user's plug-ins)."""
        builtin = self._builtin(request)
        if builtin:
            self.limit_ranger.validate(request)
        for step in self.validating:
            await step.validate(request)
        if builtin:
            await self.resource_quota.validate(request)
