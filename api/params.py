"""Query parameters (and a DeleteOptions body) parsed into the registry's request options.

`write_options`, `list_options` and `delete_options` turn the spec's query
parameters into `runtime.machinery.options` options, answering malformed values as
Kubernetes does (400 for what does not parse, 422 for what apimachinery's
option validation refuses).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

from pydantic import ValidationError

from runtime.machinery import errors
from runtime.models.meta import DeleteOptions as DeleteOptionsModel
from runtime.server.kinds.decoding import type_error_message
from runtime.machinery.options import FIELD_VALIDATION_LEVELS, Body, ListOptions, ParsedDeleteOptions, WriteOptions
from runtime.machinery.validation.gofmt import go_quote

__all__ = ["write_options", "list_options", "delete_options", "int_param"]


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "")


def int_param(args: Any, name: str) -> int | None:
    value = args.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.BadRequest(f'invalid value "{value}" for query parameter {name}: must be an integer') from None


#: The options kind each write method's query parameters decode into (named by its 422s).
_OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions",
                 "DELETE": "DeleteOptions"}


def _options_invalid(kind: str, field_path: str, reason: str, message: str) -> errors.Invalid:
    """apimachinery's 422 for bad request options: `CreateOptions.meta.k8s.io "" is invalid: ...`."""
    return errors.Invalid(f'{kind}.meta.k8s.io "" is invalid: {field_path}: {message}', group="meta.k8s.io",
                          kind=kind, causes=[errors.Cause(reason, message, field_path)])


def _go_bool(value: str) -> bool:
    # Kubernetes' query-parameter conversion: anything but "0" or "false" is true (`?force` too).
    return value != "0" and value.lower() != "false"


def _dry_run(values: Sequence[str], kind: str) -> bool:
    """The dryRun values (`?dryRun` is [""]): only "All" (or bare, the spec's rule) is known.

    Others are 422 Invalid, as apimachinery's ValidateDryRun answers
    (`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"x"}: ...`).
    """
    if any(v not in ("", "All") for v in values):
        listed = ", ".join(go_quote(v) for v in values)
        raise _options_invalid(kind, "dryRun", "FieldValueNotSupported",
                               f'Unsupported value: []string{{{listed}}}: supported values: "All"')
    return bool(values)


def write_options(args: Any, user_agent: str, *, method: str = "POST") -> WriteOptions:
    """Create, update and patch options from the query (dryRun, fieldManager, fieldValidation, force).

    `method` names the options in a 422 (POST CreateOptions, PUT
    UpdateOptions, PATCH PatchOptions). Raises Invalid (422) for an unknown
    dryRun value, for an unknown
    fieldValidation value and for a fieldManager over 128 bytes or with
    unprintable characters, as apimachinery does.
    """
    kind = _OPTIONS_KIND.get(method, "CreateOptions")
    level = args.get("fieldValidation") or "Warn"
    if level not in FIELD_VALIDATION_LEVELS:
        raise _options_invalid(kind, "fieldValidation", "FieldValueNotSupported",
                               f'Unsupported value: {go_quote(level)}: supported values: "", "Ignore", '
                               '"Strict", "Warn"')
    manager = args.get("fieldManager", "")
    if len(manager.encode()) > 128:
        raise _options_invalid(kind, "fieldManager", "FieldValueTooLong",
                               "Too long: may not be more than 128 bytes")
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            raise _options_invalid(kind, "fieldManager", "FieldValueInvalid",
                                   f"Invalid value: {go_quote(manager)}: invalid character U+{ord(ch):04X} "
                                   f"(at position {i})")
    return WriteOptions(dry_run=_dry_run(args.getlist("dryRun"), kind), field_manager=manager,
                        field_validation=level, force=_go_bool(args.get("force")) if "force" in args else False,
                        user_agent=user_agent)


def list_options(args: Any) -> ListOptions:
    send_initial = args.get("sendInitialEvents")
    return ListOptions(
        label_selector=args.get("labelSelector", ""), field_selector=args.get("fieldSelector", ""),
        limit=int_param(args, "limit") or 0, continue_token=args.get("continue", ""),
        resource_version=args.get("resourceVersion"), resource_version_match=args.get("resourceVersionMatch", ""),
        timeout_seconds=int_param(args, "timeoutSeconds"),
        allow_watch_bookmarks=_truthy(args.get("allowWatchBookmarks")) if "allowWatchBookmarks" in args else False,
        send_initial_events=None if send_initial is None else _truthy(send_initial))


def delete_options(args: Any, body: Body | None) -> ParsedDeleteOptions:
    """A DeleteOptions body merged with the query parameters of the same names; the body wins per field.

    Raises BadRequest for a body that is not a DeleteOptions (wrong kind, wrong
    type of a field), a query value that does not parse; Invalid for an unknown dryRun value.
    """
    data: dict[str, Any] = {}
    if body is not None:
        if not isinstance(body.data, dict):
            raise errors.BadRequest("json: cannot unmarshal array into Go value of type v1.DeleteOptions"
                                    if isinstance(body.data, list) else "DeleteOptions must be an object")
        if body.data.get("kind") not in (None, "", "DeleteOptions"):
            raise errors.BadRequest(f"the kind in the data ({body.data['kind']}) does not match the expected "
                                    "kind (DeleteOptions)")
        try:
            DeleteOptionsModel.model_validate(body.data)
        except ValidationError as exc:
            raise errors.BadRequest(type_error_message(DeleteOptionsModel, exc.errors()[0])) from None
        data = body.data

    def pick(name: str, parse: Callable[[str], Any]) -> Any:
        if data.get(name) is not None:
            return data[name]
        value = args.get(name)
        return None if value is None else parse(value)

    def parse_int(value: str) -> int:
        try:
            return int(value)
        except ValueError:
            raise errors.BadRequest(f'strconv.ParseInt: parsing {go_quote(value)}: invalid syntax') from None

    dry = _dry_run(data["dryRun"] if data.get("dryRun") is not None else args.getlist("dryRun"), "DeleteOptions")
    return ParsedDeleteOptions(
        dry_run=dry, grace_period_seconds=pick("gracePeriodSeconds", parse_int),
        preconditions=data.get("preconditions"), orphan_dependents=pick("orphanDependents", _go_bool),
        propagation_policy=pick("propagationPolicy", str),
        ignore_store_read_error=bool(pick("ignoreStoreReadErrorWithClusterBreakingPotential", _go_bool)))
