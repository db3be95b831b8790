"""What every verb module of the registry shares: results, time, versions, Kubernetes' error words.

A leaf: it imports no other registry module, so every verb module (and the
core) can import it at the top. `store_errors` is the one place where storage
errors become `runtime.machinery.errors` answers (as httpx's `map_exceptions`).

Internal to `runtime.server.registry`: imported by its modules only.
"""

from __future__ import annotations

import secrets
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator

from runtime.machinery import errors
from runtime.machinery.errors import Cause
from runtime.machinery.storedobject import StoredObject
from runtime.server.rbac import forbidden_status_message
from runtime.server.rbac.attributes import Attributes
from runtime.machinery.scheme import ResourceType
from runtime.server.storage import Compacted, KeyExists, KeyNotFound, RevisionConflict, StoreError, StoreUnavailable

__all__ = [
    "WriteResult", "DeleteResult", "ListResult", "now_rfc3339", "parse_resource_version", "random_suffix",
    "not_found", "conflict", "already_exists", "forbidden", "create_forbidden", "method_not_allowed", "too_large",
    "expired_list", "expired_continue", "too_old", "store_errors", "claim_namespace", "check_name", "invalid_object",
]


@dataclass
class WriteResult:
    """A written (or dry-run) object; `created` picks 201 over 200."""

    obj: StoredObject
    created: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass
class DeleteResult:
    """A delete's answer: the object (when it stays, or for kinds that return it) or a Status."""

    code: int
    body: dict[str, Any] | StoredObject
    warnings: list[str] = field(default_factory=list)


@dataclass
class ListResult:
    """A page of a list: its items, the list's resourceVersion, the continue token, the items left."""

    items: list[StoredObject]
    resource_version: int
    continue_token: str = ""
    remaining: int | None = None


def now_rfc3339() -> str:
    """Now in UTC at a second's precision (metav1.Time's text): formatted once per second, not per write."""
    second = int(time.time())
    if second != _formatted[0]:
        _formatted[:] = second, datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _formatted[1]


_formatted: list[Any] = [None, ""]  # (the second, its text): strftime cost a write about 1% of its time


def parse_resource_version(value: str) -> int:
    """A resourceVersion as this server writes them (decimal); 400 for anything else."""
    if not value.isdigit():
        raise errors.BadRequest(f'invalid resource version "{value}"' if value else "invalid resource version")
    return int(value)


def random_suffix(n: int = 5) -> str:
    """A generateName suffix from Kubernetes' utilrand.String alphabet (no vowels or confusable characters)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(secrets.choice(alphabet) for _ in range(n))


def claim_namespace(rt: ResourceType, meta: dict[str, Any], namespace: str) -> None:
    """The body's namespace against the request's (Kubernetes' EnsureObjectNamespaceMatchesRequestNamespace).

    A namespaced body without one takes the path's; a cluster-scoped body's is
    cleared; a namespaced body naming another namespace is 400.
    """
    expected = namespace if rt.namespaced else ""
    got = meta.get("namespace") or ""
    if got == expected:
        if rt.namespaced:
            meta["namespace"] = expected
        else:
            meta.pop("namespace", None)
        return
    if not got:
        meta["namespace"] = expected
    elif not expected:
        meta.pop("namespace", None)
    else:
        raise errors.BadRequest("the namespace of the provided object does not match the namespace sent on the "
                                "request")


def check_name(meta: dict[str, Any], name: str, namespace: str) -> None:
    """Kubernetes' checkName (PUT, PATCH): the body names the URL's object, in the URL's namespace (400)."""
    got = meta.get("name") or ""
    if not got:
        raise errors.BadRequest(f"the name of the object ({name} based on URL) was undeterminable: "
                                "name must be provided")
    if got != name:
        raise errors.BadRequest(f"the name of the object ({got}) does not match the name on the URL ({name})")
    body_namespace = meta.get("namespace") or ""
    if namespace and body_namespace and body_namespace != namespace:
        raise errors.BadRequest(f"the namespace of the object ({body_namespace}) does not match the namespace "
                                f"on the request ({namespace})")


def not_found(rt: ResourceType, name: str) -> errors.NotFound:
    return errors.NotFound(f'{rt.group_resource} "{name}" not found', name=name, group=rt.group, kind=rt.plural)


def already_exists(rt: ResourceType, name: str) -> errors.AlreadyExists:
    return errors.AlreadyExists(f'{rt.group_resource} "{name}" already exists', name=name, group=rt.group,
                                kind=rt.plural)


def conflict(rt: ResourceType, name: str, detail: str = "the object has been modified; please apply your "
             "changes to the latest version and try again") -> errors.Conflict:
    return errors.Conflict(f'Operation cannot be fulfilled on {rt.group_resource} "{name}": {detail}',
                           name=name, group=rt.group, kind=rt.plural)


def invalid_object(key: str, detail: str) -> str:
    """A failed storage precondition in Kubernetes' words (storage.NewInvalidObjError)."""
    return f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: {detail}"


def forbidden(attrs: Attributes, reason: str = "") -> errors.Forbidden:
    """Kubernetes' 403: `clusterroles.rbac... "x" is forbidden: User "u" cannot get resource ...`."""
    message = forbidden_status_message(attrs, reason)
    return errors.Forbidden(message, name=attrs.name, group=attrs.api_group, kind=attrs.resource)


def create_forbidden(attrs: Attributes, reason: str = "") -> errors.Forbidden:
    """The 403 of an update or apply that would create without `create` (Kubernetes' withAuthorization):
    `NewForbidden` with the authorizer's reason only, `clusterroles.rbac... "x" is forbidden: ` for RBAC."""
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    return errors.Forbidden(f'{qualified} "{attrs.name}" is forbidden: {reason}', name=attrs.name,
                            group=attrs.api_group, kind=attrs.resource)


def method_not_allowed() -> errors.MethodNotAllowed:
    return errors.MethodNotAllowed("the server does not allow this method on the requested resource")


def too_large(wanted: int, current: int) -> errors.ResourceVersionTooLarge:
    """Kubernetes' NewTooLargeResourceVersionError: 504 Timeout, Retry-After 1."""
    return errors.ResourceVersionTooLarge(
        f"Timeout: Too large resource version: {wanted}, current: {current}", retry_after=1,
        causes=[Cause("ResourceVersionTooLarge", "Too large resource version")])


def expired_list() -> errors.Expired:
    """410 Expired for a list at a compacted resourceVersion."""
    return errors.Expired("The resourceVersion for the provided list is too old.")


def expired_continue() -> errors.Expired:
    """410 Expired for a continue token past its TTL or its revision compacted."""
    return errors.Expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a "
        "new list without the continue parameter, or use the continue token in this response to retrieve "
        "the remainder of the results. Continuing with the provided token results in an inconsistent list - "
        "objects that were created, modified, or deleted between the time the first chunk was returned and "
        "now may show up in the list.")


def too_old(requested: int, oldest: int) -> dict[str, Any]:
    """A watch's ERROR event Status for a start version no longer kept (Kubernetes' cacher wording)."""
    return errors.Expired(f"too old resource version: {requested} ({oldest})").status()


@contextmanager
def store_errors(rt: ResourceType, name: str = "", *, continuation: bool = False) -> Iterator[None]:
    """Storage errors raised inside as the answers Kubernetes gives.

    KeyExists is 409 AlreadyExists, KeyNotFound 404, Compacted 410 Expired
    (worded for a continue token when `continuation`), RevisionConflict 409
    Conflict (a write a caller chose not to retry), StoreUnavailable 503 (the
    store cannot be reached; retry), any other StoreError 500 (a failed
    commit, a closed store).
    """
    try:
        yield
    except KeyExists:
        raise already_exists(rt, name) from None
    except KeyNotFound:
        raise not_found(rt, name) from None
    except Compacted:
        raise (expired_continue() if continuation else expired_list()) from None
    except RevisionConflict:
        raise conflict(rt, name) from None
    except StoreUnavailable as exc:
        raise errors.ServiceUnavailable(f"storage is unavailable: {exc}", retry_after=1) from exc
    except StoreError as exc:
        # NewInternalError: the error's text is the message's tail and its one cause.
        raise errors.InternalError(f"Internal error occurred: {exc}", causes=[errors.Cause("", str(exc))]) from exc
