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


class BadRequest(StatusError):
    code, reason = 400, "BadRequest"


class Unauthorized(StatusError):
    code, reason = 401, "Unauthorized"


class Forbidden(StatusError):
    code, reason = 403, "Forbidden"
    details_always = True


class NotFound(StatusError):
    code, reason = 404, "NotFound"
    details_always = True


class MethodNotAllowed(StatusError):
    code, reason = 405, "MethodNotAllowed"
    details_always = True


class NotAcceptable(StatusError):
    code, reason = 406, "NotAcceptable"


class AlreadyExists(StatusError):
    code, reason = 409, "AlreadyExists"
    details_always = True


class Conflict(StatusError):
    code, reason = 409, "Conflict"
    details_always = True


class Gone(StatusError):
    code, reason = 410, "Gone"


class Expired(StatusError):
    code, reason = 410, "Expired"


class RequestEntityTooLarge(StatusError):
    code, reason = 413, "RequestEntityTooLarge"


class UnsupportedMediaType(StatusError):
    code, reason = 415, "UnsupportedMediaType"


class Invalid(StatusError):
    code, reason = 422, "Invalid"
    details_always = True


class TooManyRequests(StatusError):
    code, reason = 429, "TooManyRequests"


class InternalError(StatusError):
    code, reason = 500, "InternalError"
    details_always = True


class ServiceUnavailable(StatusError):
    code, reason = 503, "ServiceUnavailable"


class Timeout(StatusError):
    code, reason = 504, "Timeout"
    details_always = True


class ResourceVersionTooLarge(Timeout):
    """A get/list for a version the store has not reached in time ('Too large resource version')."""


_BY_REASON: dict[str, type[StatusError]] = {
    cls.reason: cls for cls in (
        BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, NotAcceptable,
        Conflict, AlreadyExists, Gone, Expired, RequestEntityTooLarge, UnsupportedMediaType,
        Invalid, TooManyRequests, InternalError, ServiceUnavailable, Timeout)
}


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
