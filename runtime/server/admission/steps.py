"""The dynamic admission steps every server runs, in kube-apiserver's plug-in order: what
`admission_steps(context)` answers the registry builds its `AdmissionChain` with.

Mutating: MutatingAdmissionPolicy, then MutatingAdmissionWebhook. Validating:
ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook. Each step reads
its configuration objects from the context's watch cache, so a server with
none configured pays one empty lookup per write.
"""

from __future__ import annotations

from runtime.server.admission.chain import MutatingStep, ValidatingStep
from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.policies import MutatingPolicies, ValidatingPolicies

__all__ = ["admission_steps"]


def admission_steps(context: AdmissionContext) -> tuple[list[MutatingStep], list[ValidatingStep]]:
    """(mutating, validating) steps over `context`, in order."""
    mutating: list[MutatingStep] = []
    validating: list[ValidatingStep] = []
    mutating.append(MutatingPolicies(context))  # type: ignore[arg-type]  # the registry is a PolicyContext
    validating.append(ValidatingPolicies(context))  # type: ignore[arg-type]  # the registry is a PolicyContext
    return mutating, validating
