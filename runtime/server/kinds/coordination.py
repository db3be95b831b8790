"""coordination/v1 `Lease`: the lock of leader election (Kubernetes' `pkg/registry/coordination/lease`).

Names are DNS subdomains; `spec.leaseDurationSeconds` must be positive and
`spec.leaseTransitions` not negative (`pkg/apis/coordination/validation`).
`kubectl get` prints the holder.
"""

from __future__ import annotations

from typing import Any

from runtime.server.kinds.base import Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid

__all__ = ["LeaseStrategy"]

_HOLDER_DOC = ("holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader "
               "Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name "
               "field.")


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    holder = (obj.get("spec") or {}).get("holderIdentity") or ""
    return [meta.get("name", ""), holder, age(meta.get("creationTimestamp"))]


class LeaseStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    kube_finalizers = False  # ValidateLease uses apimachinery's ValidateObjectMeta
    columns = Columns((NAME_COLUMN, column("Holder", _HOLDER_DOC), AGE_COLUMN), _cells)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs: list[FieldError] = []
        spec = obj.get("spec") or {}
        duration = spec.get("leaseDurationSeconds")
        if duration is not None and duration <= 0:
            errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
        transitions = spec.get("leaseTransitions")
        if transitions is not None and transitions < 0:
            errs.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
        return errs
