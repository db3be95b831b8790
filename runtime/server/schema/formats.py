"""String formats Kubernetes validates in CRD schemas (kube-openapi's `strfmt`).

Kubernetes keeps a fixed list of formats (`apiserver/validation/formats.go`)
and ignores any other (`StripUnsupportedFormatsPostProcess`): `format:
foo` validates nothing. On `integer` only int32/int64, on `number` only
float/double are kept, and neither checks the value's range (kube-openapi's
number validator is given no format for schemas). `format_checker(type,
format)` returns the check for a string schema, or None when the format is
ignored; names are normalized as go-openapi does (`date-time` = `datetime`).

Each check mirrors the Go function kube-openapi registers: `uri` is
`govalidator.IsRequestURI` (absolute URI or absolute path), `email` is
`net/mail.ParseAddress` (simplified to an addr-spec), `hostname` RFC 1034
with kube-openapi's regex, `ipv4`/`ipv6`/`cidr` Go's `net` parsers, `mac`
`net.ParseMAC`, `uuid*` kube-openapi's regexes, `byte` standard base64,
`date` `2006-01-02`, `date-time` RFC 3339 (and the layouts strfmt accepts),
`duration` Go's `time.ParseDuration` or strfmt's `22 ns` form.

Internal to `runtime.server.schema`: imported by its modules only.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import functools
import ipaddress
import re
from collections.abc import Callable
from urllib.parse import urlsplit

from runtime.server.schema.regex import compile_pattern

__all__ = ["SUPPORTED_STRING_FORMATS", "format_checker", "normalize_format"]

SUPPORTED_STRING_FORMATS = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime",
})


@functools.cache
def _hostname_pattern() -> re.Pattern[str]:
    """strfmt's hostname pattern, compiled when first used: its Unicode classes (\\p{S}, \\p{L}) expand to a
    pattern that took every server's start 0.17 s to compile, and few schemas ask for the format."""
    return compile_pattern(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]"
        r"{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$")


_UUID = {
    "uuid": compile_pattern(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    "uuid3": compile_pattern(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
    "uuid4": compile_pattern(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"),
    "uuid5": compile_pattern(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"),
}
_BSON = re.compile(r"^[0-9a-fA-F]{24}$")
_EMAIL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$")
_MAC = re.compile(r"^(?:[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){7}|"
                  r"[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){19}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){2}|"
                  r"[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){3}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){9})$")
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGBCOLOR = re.compile(r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
                       r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$")
_CREDITCARD = re.compile(r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|"
                         r"3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")
_GO_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$")
_STRFMT_DURATION = re.compile(
    r"^(\d+)\s*(ns|nanoseconds?|us|µs|microseconds?|ms|milliseconds?|s|sec|seconds?|m|min|minutes?|h|hr|hours?|"
    r"d|days?|w|wk|weeks?)$")


def normalize_format(fmt: str) -> str:
    """go-openapi's normalization: `date-time` and `datetime` are one format."""
    return fmt.replace("-", "")


def _uri(s: str) -> bool:  # govalidator.IsRequestURI = url.ParseRequestURI
    if not s or any(c in s for c in " \t\n") or "#" in s:
        return False
    if s.startswith("/"):
        return True
    parts = urlsplit(s)
    return bool(parts.scheme) and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*$", parts.scheme) is not None


def _email(s: str) -> bool:
    if "<" in s and s.endswith(">"):
        s = s[s.rindex("<") + 1:-1]
    return _EMAIL.match(s) is not None and ".." not in s.split("@")[0]


def _hostname(s: str) -> bool:
    return bool(_hostname_pattern().search(s)) and len(s) <= 255 and all(len(p) <= 63 for p in s.split("."))


def _ipv4(s: str) -> bool:  # govalidator.IsIPv4: net.ParseIP and a dot
    return _parse_ip(s) and "." in s and ":" not in s


def _ipv6(s: str) -> bool:
    return _parse_ip(s) and ":" in s


def _parse_ip(s: str) -> bool:
    try:
        ipaddress.ip_address(s)
        return "%" not in s
    except ValueError:
        return bool(re.match(r"^::ffff:\d+\.\d+\.\d+\.\d+$", s))


def _cidr(s: str) -> bool:
    address, slash, prefix = s.partition("/")
    if not slash or not prefix.isdigit() or not _parse_ip(address):
        return False
    return int(prefix) <= (32 if ":" not in address else 128)


def _byte(s: str) -> bool:
    try:
        base64.b64decode(s, validate=True)
        return True
    except (binascii.Error, ValueError):
        return False


def _date(s: str) -> bool:
    if not _DATE.match(s):
        return False
    try:
        datetime.date.fromisoformat(s)
        return True
    except ValueError:
        return False


def _datetime(s: str) -> bool:
    m = _DATETIME.match(s)
    if not m:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        datetime.datetime(year, month, day, hour, minute, min(second, 59))
    except ValueError:
        return False
    zone = m.group(8) or ""
    if zone[:1] in "+-" and zone and (int(zone[1:3]) > 23 or int(zone[4:6]) > 59):
        return False
    return second <= 60


def _duration(s: str) -> bool:
    return s == "0" or _GO_DURATION.match(s) is not None or _STRFMT_DURATION.match(s) is not None


def _isbn10(s: str) -> bool:
    digits = re.sub(r"[\s-]", "", s)
    if not re.match(r"^\d{9}[\dX]$", digits):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
    return total % 11 == 0


def _isbn13(s: str) -> bool:
    digits = re.sub(r"[\s-]", "", s)
    if not re.match(r"^\d{13}$", digits):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits[:12]))
    return (10 - total % 10) % 10 == int(digits[12])


def _creditcard(s: str) -> bool:
    digits = re.sub(r"[^0-9]", "", s)
    if not _CREDITCARD.match(digits):
        return False
    total, double = 0, False
    for c in reversed(digits):
        d = int(c) * (2 if double else 1)
        total += d - 9 if d > 9 else d
        double = not double
    return total % 10 == 0


_CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda s: _BSON.match(s) is not None,
    "uri": _uri,
    "email": _email,
    "hostname": _hostname,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "cidr": _cidr,
    "mac": lambda s: _MAC.match(s) is not None,
    "uuid": _UUID["uuid"].search,
    "uuid3": _UUID["uuid3"].search,
    "uuid4": _UUID["uuid4"].search,
    "uuid5": _UUID["uuid5"].search,
    "isbn": lambda s: _isbn10(s) or _isbn13(s),
    "isbn10": _isbn10,
    "isbn13": _isbn13,
    "creditcard": _creditcard,
    "ssn": lambda s: _SSN.match(s) is not None,
    "hexcolor": lambda s: _HEXCOLOR.match(s) is not None,
    "rgbcolor": lambda s: _RGBCOLOR.match(s) is not None,
    "byte": _byte,
    "password": lambda s: True,
    "date": _date,
    "duration": _duration,
    "datetime": _datetime,
}


def format_checker(schema_type: str, fmt: str) -> Callable[[str], bool] | None:
    """The check of a string `format`, or None when Kubernetes ignores the format."""
    if not fmt or schema_type not in ("", "string"):
        return None
    return _CHECKS.get(normalize_format(fmt))
