"""One error tree for miniplane: a class per Kubernetes `Status` reason.

Every error the registry, storage or client raises that maps to an HTTP answer
is a `StatusError`. `StatusError.status()` renders the Kubernetes `Status`
object; the HTTP layer writes it in the negotiated media type.

`details` is written as Kubernetes writes it: the reasons whose constructors
always set it (`NewNotFound`, `NewForbidden`, `NewMethodNotSupported`,
`NewGenericServerResponse`, ...: `details_always`) carry it even when empty
(`"details": {}`, e.g. the 404 of a served group version's unknown resource);
the others (BadRequest, Unauthorized, Gone, ...) only when something is in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "Cause", "StatusError", "BadRequest", "Unauthorized", "Forbidden", "NotFound",
    "MethodNotAllowed", "NotAcceptable", "AlreadyExists", "Conflict", "Gone", "Expired",
    "RequestEntityTooLarge", "UnsupportedMediaType", "Invalid", "TooManyRequests",
    "InternalError", "ServiceUnavailable", "Timeout", "ResourceVersionTooLarge",
    "status_from_dict", "success_status", "reason_for_code",
]


#: The declared reasons, in declaration order (`StatusError.__init_subclass__` files them).
_BY_REASON: dict[str, type[StatusError]] = {}


@dataclass(frozen=True)
class Cause:
    """One `StatusCause`: reason (e.g. FieldValueInvalid), message, field path."""

    reason: str
    message: str
    field: str = ""

    def to_dict(self) -> dict[str, str]:
        # StatusCause's fields are all omitempty: NewInternalError's cause is a message alone.
        pairs = (("reason", self.reason), ("message", self.message), ("field", self.field))
        return {key: value for key, value in pairs if value}


class StatusError(Exception):
    """An error answered with a Kubernetes `Status`.

    `code` and `reason` are the class defaults; `details` carries name, group,
    kind and causes as Kubernetes puts them in `Status.details`.
    """

    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"
    #: Kubernetes' constructors of this reason always set `details` (see the module doc).
    details_always: ClassVar[bool] = False

    def __init_subclass__(cls, *, code: int | None = None, details_always: bool = False, **kwargs: Any) -> None:
        """`class NotFound(StatusError, code=404)` declares the reason NotFound; without `code`, the base's reason."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code, cls.reason, cls.details_always = code, cls.__name__, details_always
            _BY_REASON[cls.reason] = cls

    def __init__(self, message: str, *, name: str = "", group: str = "", kind: str = "",
                 causes: list[Cause] | None = None, retry_after: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.name = name
        self.group = group
        self.kind = kind
        self.causes = list(causes or [])
        self.retry_after = retry_after
        self.headers = dict(headers or {})

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message, "reason": self.reason,
        }
        # Go's omitempty on StatusDetails, in its field order.
        details: dict[str, Any] = {k: v for k, v in (("name", self.name), ("group", self.group),
                                                     ("kind", self.kind)) if v}
        if self.causes:
            details["causes"] = [c.to_dict() for c in self.causes]
        if self.retry_after is not None:
            details["retryAfterSeconds"] = self.retry_after
        if details or self.details_always:
            status["details"] = details
        status["code"] = self.code  # after details: metav1.Status's field order
        if not self.reason:
            del status["reason"]
        return status


# The reasons: a class each, named for its reason (`StatusError.__init_subclass__` files it), with its
# code and whether Kubernetes' constructor always sets `details`. Where two reasons share a code, the
# first is the code's usual reason (`reason_for_code`): Conflict for 409, Gone for 410.
class BadRequest(StatusError, code=400): ...
class Unauthorized(StatusError, code=401): ...
class Forbidden(StatusError, code=403, details_always=True): ...
class NotFound(StatusError, code=404, details_always=True): ...
class MethodNotAllowed(StatusError, code=405, details_always=True): ...
class NotAcceptable(StatusError, code=406): ...
class Conflict(StatusError, code=409, details_always=True): ...
class AlreadyExists(StatusError, code=409, details_always=True): ...
class Gone(StatusError, code=410): ...
class Expired(StatusError, code=410): ...
class RequestEntityTooLarge(StatusError, code=413): ...
class UnsupportedMediaType(StatusError, code=415): ...
class Invalid(StatusError, code=422, details_always=True): ...
class TooManyRequests(StatusError, code=429): ...
class InternalError(StatusError, code=500, details_always=True): ...
class ServiceUnavailable(StatusError, code=503): ...
class Timeout(StatusError, code=504, details_always=True): ...


class ResourceVersionTooLarge(Timeout):
    """A get/list for a version the store has not reached in time ('Too large resource version')."""


# The usual reason of each code (409 and 410 have two; an answer without a Status gets the first).
_BY_CODE: dict[int, str] = {}
for _cls in _BY_REASON.values():
    _BY_CODE.setdefault(_cls.code, _cls.reason)


def reason_for_code(code: int) -> str:
    """The Status reason Kubernetes gives an HTTP code ("" if none), for answers that carry no Status."""
    return _BY_CODE.get(code, "")


def status_from_dict(status: dict[str, Any]) -> StatusError:
    """Rebuild a `StatusError` from a `Status` answer (used by the HTTP client)."""
    reason = status.get("reason") or ""
    code = int(status.get("code") or 500)
    cls = _BY_REASON.get(reason)
    if cls is None or cls.code != code:
        cls = type("StatusError%d" % code, (StatusError,), {"code": code, "reason": reason})
    details = status.get("details") or {}
    causes = [Cause(c.get("reason", ""), c.get("message", ""), c.get("field", ""))
              for c in details.get("causes") or []]
    return cls(status.get("message", ""), name=details.get("name", ""),
               group=details.get("group", ""), kind=details.get("kind", ""), causes=causes,
               retry_after=details.get("retryAfterSeconds"))


def success_status(*, name: str = "", group: str = "", kind: str = "", uid: str = "") -> dict[str, Any]:
    """The `Status` a delete of an object without finalizers answers with."""
    details: dict[str, Any] = {"name": name, "kind": kind}
    if group:
        details["group"] = group
    if uid:
        details["uid"] = uid
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details}
