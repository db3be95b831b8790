"""The patch engines' errors: one class per way a patch fails, and the server-side apply conflict.

Each class says what went wrong; the registry answers each with the status
Kubernetes gives it (`runtime.server.registry.patching.patch_errors`):

- `MalformedPatch`: the patch document cannot be read (not JSON, wrong
  shape, a malformed directive): 400.
- `PatchNotApplicable`: a well-formed patch does not apply to this object (a
  failed json patch `test`, a missing path, a merge key absent from a list
  item): 422.
- `TooManyOperations`: a json patch with more than 10000 operations: 413.
- `CorruptManagedFields`: stored managed fields that cannot be decoded: 500.
- `ApplyConflict`: server-side apply would change fields other managers own:
  409, one `FieldConflict` per field.

Messages are Kubernetes' own words.

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.machinery.errors import Cause

__all__ = ["PatchError", "MalformedPatch", "PatchNotApplicable", "TooManyOperations", "CorruptManagedFields",
           "FieldConflict", "ApplyConflict"]


class PatchError(ValueError):
    """Base of the patch engines' errors; `message` is in Kubernetes' words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MalformedPatch(PatchError):
    """The patch document cannot be read (400)."""


class PatchNotApplicable(PatchError):
    """A well-formed patch that does not apply to this object (422)."""


class TooManyOperations(PatchError):
    """A json patch with more operations than allowed (413)."""


class CorruptManagedFields(PatchError):
    """Stored managed fields that cannot be decoded (500)."""


@dataclass(frozen=True)
class FieldConflict:
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

    def __init__(self, message: str, conflicts: tuple[FieldConflict, ...]) -> None:
        super().__init__(message)
        self.conflicts = conflicts

    def causes(self) -> list[Cause]:
        return [c.cause() for c in self.conflicts]
