"""The dynamic admission steps every server runs, in kube-apiserver's plug-in order: what
`admission_steps(context)` answers the registry builds its `AdmissionChain` with.

Mutating: MutatingAdmissionPolicy, then MutatingAdmissionWebhook. Validating:
ValidatingAdmissionPolicy, then ValidatingAdmissionWebhook. Last of each phase, the Python webhooks
handed to the registry among its `admission` (`runtime.server.admission.python`), as webhooks
configured after all others would run. Each step reads
its configuration objects from the context's watch cache, so a server with
none configured pays one empty lookup per write.
"""

from __future__ import annotations

from runtime.server.admission.chain import MutatingStep, ValidatingStep
from runtime.server.admission.context import AdmissionContext
from runtime.server.admission.policies import MutatingPolicies, ValidatingPolicies
from runtime.server.admission.python import python_steps
from runtime.server.admission.webhooks import MutatingWebhooks, ValidatingWebhooks

__all__ = ["admission_steps"]


def admission_steps(context: AdmissionContext) -> tuple[list[MutatingStep], list[ValidatingStep]]:
    """(mutating, validating) steps over `context`, in order."""
    mutating: list[MutatingStep] = []
    validating: list[ValidatingStep] = []
    mutating.append(MutatingPolicies(context))  # type: ignore[arg-type]  # the registry is a PolicyContext
    validating.append(ValidatingPolicies(context))  # type: ignore[arg-type]  # the registry is a PolicyContext
    mutating.append(MutatingWebhooks(context))
    validating.append(ValidatingWebhooks(context))
    # Last of each phase (the webhooks' steps come before these lines). The registry's `admission`, which the
    # registry sets before it asks for the steps, holds the Python webhooks beside its plug-ins.
    python_mutating, python_validating = python_steps(context, getattr(context, "admission", ()))
    if python_mutating is not None:
        mutating.append(python_mutating)
    if python_validating is not None:
        validating.append(python_validating)
    return mutating, validating
