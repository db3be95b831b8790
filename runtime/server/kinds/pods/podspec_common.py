"""The small rules the pod spec's validators share, in apimachinery's and core validation's words.

- names: `dns_label`, `dns_subdomain` (`ValidateDNS1123Label`/`Subdomain`
  as field errors; `subdomain_errors` is `IsDNS1123Subdomain`, the one
  `runtime.server.kinds.cluster.volumes` has), `label_map` (`ValidateLabels`),
  `annotation_map` (`ValidateAnnotations`), `qualified_name`;
- numbers: `port_number` (`IsValidPortNum`), `port_name_errors` (`IsValidPortName`,
  IANA service names: `cluster.netrules`' rule), `port_num_or_name`, `inclusive_range`,
  `protocol_errors` (a port's `protocol`: required, one of `PROTOCOLS`),
  `user_id`/`group_id`, `file_mode`;
- text: `env_var_name` (`IsEnvVarName`), `http_header_name`, `ip_address`;
- paths: `local_descending_path`, `no_backsteps`, `local_non_reserved_path`;
- one of: `exactly_one_of`, a union of which exactly one member is set (a
  volume's source, a probe's or hook's handler);
- quantities: `quantity` parses one (`parse_quantity`) or answers the field
  error with Kubernetes' message.
"""

from __future__ import annotations

import functools
import ipaddress
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from runtime.machinery.quantity import Quantity, QuantityError, parse_quantity
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required, too_long
from runtime.machinery.validation.gofmt import go_value
from runtime.machinery.validation.labels import label_key_errors, label_value_errors
from runtime.machinery.validation.names import dns1123_label_errors
# The cluster kinds' copies of two apimachinery rules, one for every kind (the pods package may import the
# cluster package, which never imports it back).
from runtime.server.kinds.cluster.netrules import port_name_errors
from runtime.server.kinds.cluster.volumes import subdomain_errors

__all__ = ["regex_error", "inclusive_range", "dns_label", "dns_subdomain", "subdomain_errors", "label_map",
           "annotation_map", "qualified_name", "port_number", "port_name_errors", "port_num_or_name",
           "user_id", "group_id", "file_mode", "env_var_name", "http_header_name", "ip_address",
           "local_descending_path", "no_backsteps", "local_non_reserved_path", "quantity",
           "FILE_MODE_MSG", "MAX_INT32", "not_found", "cached_quantity", "protocol_errors", "PROTOCOLS",
           "exactly_one_of"]

MAX_INT32 = (1 << 31) - 1
#: `supportedPortProtocols`, sorted as Kubernetes lists them in a NotSupported error.
PROTOCOLS = ["SCTP", "TCP", "UDP"]
FILE_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"
_ENV_VAR_FMT = r"[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR = re.compile(_ENV_VAR_FMT)
_HTTP_HEADER_FMT = r"[-A-Za-z0-9]+"
_HTTP_HEADER = re.compile(_HTTP_HEADER_FMT)
_ANNOTATIONS_MAX = 256 * 1024


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's `RegexError`, its double spaces included."""
    shown = "".join(("" if i == 0 else " or ") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def inclusive_range(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def dns_label(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in dns1123_label_errors(value)]


def dns_subdomain(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in subdomain_errors(value)]


def qualified_name(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in label_key_errors(value)]


def label_map(labels: Any, path: str) -> list[FieldError]:
    """`ValidateLabels`: each key a qualified name, each value a label value, both at `path` itself."""
    errs: list[FieldError] = []
    for key, value in (labels or {}).items():
        errs += [invalid(path, key, msg) for msg in label_key_errors(key)]
        errs += [invalid(path, value, msg) for msg in label_value_errors(value or "")]
    return errs


def annotation_map(annotations: Any, path: str) -> list[FieldError]:
    """`ValidateAnnotations`: keys qualified names (lowercased), at most 256 KiB in all."""
    errs: list[FieldError] = []
    size = 0
    for key, value in (annotations or {}).items():
        errs += [invalid(path, key, msg) for msg in label_key_errors(key.lower())]
        size += len(key) + len(value or "")
    if size > _ANNOTATIONS_MAX:
        errs.append(too_long(path, _ANNOTATIONS_MAX))
    return errs


def port_number(value: int, path: str) -> list[FieldError]:
    return [] if 1 <= value <= 65535 else [invalid(path, value, inclusive_range(1, 65535))]


def protocol_errors(protocol: str | None, path: str, *, empty_is_unset: bool = True) -> list[FieldError]:
    """A port's `protocol` (a container's, a Service's, an Endpoints' or an EndpointSlice's): `Required value`
    when unset, else one of `PROTOCOLS`. Core validation tests `len(protocol) == 0`, so "" is unset too;
    discovery tests `protocol == nil` (`empty_is_unset=False`: "" is `Unsupported value: ""`)."""
    if protocol is None or (empty_is_unset and not protocol):
        return [required(path)]
    return [] if protocol in PROTOCOLS else [not_supported(path, protocol, PROTOCOLS)]


def exactly_one_of(union: dict[str, Any], members: Iterable[str], path: str, what: str,
                   check: Callable[[str, Any], list[FieldError]],
                   second_paths: Mapping[str, str] | None = None) -> list[FieldError]:
    """Core validation's one-of count (`numVolumes`, `numHandlers`): `check(member, value)` for the first of
    `members` set in `union`; `<path>.<member>: Forbidden: may not specify more than 1 <what>` for each later
    one set (at `second_paths`' name for it where Kubernetes misspells it); `<path>: Required value: must
    specify a <what>` when none is. Errors in Kubernetes' order: each member's where it stands."""
    errs: list[FieldError] = []
    found = False
    for member in members:
        value = union.get(member)
        if value is None:
            continue
        if found:
            at = (second_paths or {}).get(member, member)
            errs.append(forbidden(f"{path}.{at}", f"may not specify more than 1 {what}"))
            continue
        found = True
        errs += check(member, value)
    if not found:
        errs.append(required(path, f"must specify a {what}"))
    return errs


def port_num_or_name(port: Any, path: str) -> list[FieldError]:
    """`ValidatePortNumOrName` of an IntOrString."""
    if isinstance(port, str):
        return [invalid(path, port, msg) for msg in port_name_errors(port)]
    return port_number(port or 0, path)


def user_id(value: int, path: str) -> list[FieldError]:
    return [] if 0 <= value <= MAX_INT32 else [invalid(path, value, inclusive_range(0, MAX_INT32))]


group_id = user_id


def file_mode(value: Any, path: str) -> list[FieldError]:
    return [invalid(path, value, FILE_MODE_MSG)] if value is not None and not 0 <= value <= 0o777 else []


def env_var_name(name: str, path: str) -> list[FieldError]:
    """`IsEnvVarName`: the pattern, and not `.`, `..` nor a `..` prefix."""
    msgs = []
    if not _ENV_VAR.fullmatch(name):
        msgs.append(regex_error("a valid environment variable name must consist of alphabetic characters, digits, "
                                "'_', '-', or '.', and must not start with a digit", _ENV_VAR_FMT,
                                "my.env-name", "MY_ENV.NAME", "MyEnvName1"))
    if name in (".", ".."):
        msgs.append(f"must not be '{name}'")
    elif name.startswith(".."):
        msgs.append("must not start with '..'")
    return [invalid(path, name, msg) for msg in msgs]


def http_header_name(name: str, path: str) -> list[FieldError]:
    if _HTTP_HEADER.fullmatch(name):
        return []
    return [invalid(path, name, regex_error("a valid HTTP header must consist of alphanumeric characters or '-'",
                                            _HTTP_HEADER_FMT, "X-Header-Name"))]


def ip_address(value: str, path: str) -> list[FieldError]:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return [invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    return []


def no_backsteps(target: str, path: str) -> list[FieldError]:
    """`validatePathNoBacksteps`: no `..` element."""
    return [invalid(path, target, "must not contain '..'")] if ".." in target.split("/") else []


def local_descending_path(target: str, path: str) -> list[FieldError]:
    """`validateLocalDescendingPath`: relative, no `..` element."""
    errs = [invalid(path, target, "must be a relative path")] if posixpath.isabs(target) else []
    return errs + no_backsteps(target, path)


def local_non_reserved_path(target: str, path: str) -> list[FieldError]:
    """`ValidateLocalNonReservedPath`: a local descending path that does not start with `..`."""
    errs = local_descending_path(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(invalid(path, target, "must not start with '..'"))
    return errs


@functools.lru_cache(maxsize=4096)
def cached_quantity(text: str) -> Quantity:
    """parse_quantity, remembered: a workload's few distinct quantities are parsed on every write of it."""
    return parse_quantity(text)


def quantity(value: Any, path: str) -> tuple[Quantity | None, list[FieldError]]:
    """`value` parsed, or None and the field error with Kubernetes' message."""
    try:
        return cached_quantity(value if isinstance(value, str) else repr(value)), []
    except QuantityError as exc:
        return None, [invalid(path, value, str(exc))]


class _NotFound(FieldError):
    """`field.NotFound` (fielderrors has no helper for it): `Not found: "name"`."""

    @property
    def message(self) -> str:
        return f"Not found: {go_value(self.value)}"


def not_found(path: str, value: Any) -> FieldError:
    return _NotFound("FieldValueNotFound", path, "", value)
