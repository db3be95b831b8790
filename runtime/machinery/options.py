"""What a request carries besides its path: options, body, patch type. A leaf (it imports only `runtime.machinery.errors`).

Shared by the server side (the registry takes them) and by clients (which
send them), so an out-of-process controller loads this module and no server
code. Everything here is plain data.

- `WriteOptions` (create, update, patch), `ListOptions` (list, watch,
  deletecollection), `ParsedDeleteOptions` (delete): the query parameters of the
  spec, already parsed. `ParsedDeleteOptions` is a DeleteOptions body merged
  with its query parameters; the wire model `metav1.DeleteOptions` (which the
  body is checked against, and which OpenAPI and protobuf describe) is
  `runtime.models.meta.DeleteOptions`.
- `Body`: a decoded request body and the keys the decoder saw twice.
- `PATCH_TYPES`: the patch Content-Types, in the order a 415 lists them, and
  `patch_type(content_type)`, the one check of a PATCH's media type;
  `patch_content_type(...)`, what a client sends for a patch type it was
  given as a `PatchType`, its value or a Content-Type.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from runtime.machinery.errors import UnsupportedMediaType

__all__ = [
    "WriteOptions", "ListOptions", "ParsedDeleteOptions", "Body", "PatchType", "PATCH_TYPES",
    "JSON_PATCH", "MERGE_PATCH", "STRATEGIC_MERGE_PATCH", "APPLY_PATCH", "APPLY_PATCH_JSON",
    "APPLY_PATCH_CBOR", "FIELD_VALIDATION_LEVELS", "patch_type", "patch_content_type",
]

#: `fieldValidation` levels: drop, warn about, or refuse unknown and duplicate fields.
FIELD_VALIDATION_LEVELS = ("Ignore", "Warn", "Strict")


@dataclass(frozen=True)
class WriteOptions:
    """Options of create, update and patch."""

    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Warn"
    force: bool = False
    user_agent: str = ""


@dataclass(frozen=True)
class ListOptions:
    """Options of list, watch and deletecollection (query parameters of the spec)."""

    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_token: str = ""
    resource_version: str | None = None
    resource_version_match: str = ""
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None


@dataclass(frozen=True)
class ParsedDeleteOptions:
    """A DeleteOptions body merged with its query parameters (the body wins)."""

    dry_run: bool = False
    grace_period_seconds: int | None = None
    preconditions: dict[str, Any] | None = None
    orphan_dependents: bool | None = None
    propagation_policy: str | None = None
    ignore_store_read_error: bool = False


@dataclass(frozen=True)
class Body:
    """A request body as the media decoder read it: the data, and keys it saw twice."""

    data: Any
    duplicates: tuple[str, ...] = field(default=())


class PatchType(enum.Enum):
    """The engine a PATCH's Content-Type selects."""

    JSON = "json"
    MERGE = "merge"
    STRATEGIC = "strategic"
    APPLY = "apply"


JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
APPLY_PATCH_JSON = "application/apply-patch+json"
APPLY_PATCH_CBOR = "application/apply-patch+cbor"

#: Content-Type -> engine, in the order a 415 lists them.
PATCH_TYPES: dict[str, PatchType] = {
    JSON_PATCH: PatchType.JSON,
    MERGE_PATCH: PatchType.MERGE,
    STRATEGIC_MERGE_PATCH: PatchType.STRATEGIC,
    APPLY_PATCH: PatchType.APPLY,
    APPLY_PATCH_JSON: PatchType.APPLY,
    APPLY_PATCH_CBOR: PatchType.APPLY,
}


#: The Content-Type a client sends for each engine (an apply as YAML: its JSON is YAML).
_SENT_AS: dict[PatchType, str] = {PatchType.JSON: JSON_PATCH, PatchType.MERGE: MERGE_PATCH,
                                  PatchType.STRATEGIC: STRATEGIC_MERGE_PATCH, PatchType.APPLY: APPLY_PATCH}
_BY_VALUE = {k.value: k for k in PatchType}


def patch_content_type(kind: PatchType | str) -> str:
    """The Content-Type of a PATCH named by `kind`: a `PatchType`, its value ("json", "merge",
    "strategic", "apply"), or one of `PATCH_TYPES` (returned as given, parameters and all).

    Raises TypeError naming the accepted ones for anything else: a client's
    mistake, caught before a request is sent (the server would answer 415).
    """
    if isinstance(kind, PatchType):
        return _SENT_AS[kind]
    if isinstance(kind, str):
        if kind in _BY_VALUE:
            return _SENT_AS[_BY_VALUE[kind]]
        if kind.split(";")[0].strip().lower() in PATCH_TYPES:
            return kind
    accepted = ", ".join(repr(v) for v in (*_BY_VALUE, *PATCH_TYPES))
    raise TypeError(f"patch_type must be a PatchType or one of {accepted}; got {kind!r}")


def patch_type(content_type: str, *, cbor: bool = False, strategic: bool = True) -> PatchType:
    """The engine of a PATCH with `content_type` (parameters ignored).

    `cbor`: the CBOR apply type is served (feature gate CBORServingAndStorage);
    `strategic`: the kind has a strategic merge patch schema (custom kinds do
    not). Raises UnsupportedMediaType (415) in Kubernetes' words otherwise.
    """
    media = content_type.split(";")[0].strip().lower()
    kind = PATCH_TYPES.get(media)
    if kind is None or (kind is PatchType.STRATEGIC and not strategic):
        accepted = [t for t, k in PATCH_TYPES.items() if strategic or k is not PatchType.STRATEGIC]
        raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                   f"include: {', '.join(accepted)}")
    if media == APPLY_PATCH_CBOR and not cbor:
        raise UnsupportedMediaType(f"{APPLY_PATCH_CBOR} requires the CBORServingAndStorage feature gate")
    return kind
