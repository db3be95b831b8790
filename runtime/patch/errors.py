"""The patch engines' one error type, and the server-side apply conflict.

`PatchError.code` is the HTTP status Kubernetes answers with: 400 for a patch
document that cannot be read (not JSON, wrong shape, a malformed directive),
422 when a well-formed patch cannot be applied to this object (a failed json
patch `test`, a missing path, a merge key absent from a list item), 413 for a
json patch with too many operations, 409 for `ApplyConflict`, 500 for stored
managed fields that cannot be decoded. Messages are Kubernetes' own words.
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.errors import Cause

__all__ = ["PatchError", "Conflict", "ApplyConflict"]


class PatchError(ValueError):
    """A patch that is malformed (400) or cannot be applied (422); see the module doc."""

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Conflict:
    """One field another manager owns that an apply would change.

    `manager` is the owner as Kubernetes prints it (`"kubectl-client-side-apply"
    using rbac.authorization.k8s.io/v1`), `field` the field path (`.rules`).
    """

    manager: str
    field: str

    def cause(self) -> Cause:
        """The `StatusCause` Kubernetes attaches (reason FieldManagerConflict)."""
        return Cause("FieldManagerConflict", f"conflict with {self.manager}", self.field)


class ApplyConflict(PatchError):
    """Server-side apply would change fields owned by other managers (409 Conflict).

    `conflicts` lists each field and its owner; `causes()` gives them as
    `StatusCause`s for the `Status.details` of the 409 answer.
    """

    def __init__(self, message: str, conflicts: tuple[Conflict, ...]) -> None:
        super().__init__(message, 409)
        self.conflicts = conflicts

    def causes(self) -> list[Cause]:
        return [c.cause() for c in self.conflicts]
