"""The network value rules the networking kinds share, in apimachinery's words (`util/validation`).

`port_name_errors` (`IsValidPortName`), `port_number_errors`
(`IsValidPortNum`), `wildcard_subdomain_errors` (`IsWildcardDNS1123Subdomain`),
`parse_cidr` (`ValidateCIDR`: Go's `net.ParseCIDR`, host bits allowed),
`is_ip` (`netutils.ParseIPSloppy`), `backend_reference_errors`
(`validateIngressTypedLocalObjectReference`, which Ingress backends and
IngressClass parameters share).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, required
from runtime.machinery.validation.names import path_segment_errors
from runtime.server.kinds.cluster.volumes import subdomain_errors

__all__ = ["port_name_errors", "port_number_errors", "wildcard_subdomain_errors", "parse_cidr", "is_ip",
           "backend_reference_errors"]

_PORT_NAME_CHARS = re.compile(r"[-a-z0-9]+")
_LETTER = re.compile(r"[a-z]")
_WILDCARD_FMT = r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_WILDCARD = re.compile(_WILDCARD_FMT)
_WILDCARD_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
                 "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character "
                 f"(e.g. '*.example.com', regex used for validation is '{_WILDCARD_FMT}')")


def port_name_errors(name: str) -> list[str]:
    errs = ["must be no more than 15 characters"] if len(name) > 15 else []
    if not _PORT_NAME_CHARS.fullmatch(name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _LETTER.search(name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def port_number_errors(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def wildcard_subdomain_errors(host: str) -> list[str]:
    errs = ["must be no more than 253 characters"] if len(host) > 253 else []
    return errs + ([] if _WILDCARD.fullmatch(host) else [_WILDCARD_MSG])


def parse_cidr(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """The network of CIDR `text` (host bits allowed, as Go's ParseCIDR), None if it is none."""
    if "/" not in text:
        return None
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def backend_reference_errors(ref: dict[str, Any], path: str) -> list[FieldError]:
    """A typed local reference (apiGroup a DNS subdomain, kind and name required path segments)."""
    errs: list[FieldError] = []
    if ref.get("apiGroup") is not None:
        errs += [invalid(f"{path}.apiGroup", ref["apiGroup"], msg) for msg in subdomain_errors(ref["apiGroup"])]
    for field in ("kind", "name"):
        value = ref.get(field) or ""
        if not value:
            errs.append(required(f"{path}.{field}", f"{field} is required"))
        else:
            errs += [invalid(f"{path}.{field}", value, msg) for msg in path_segment_errors(value)]
    return errs
