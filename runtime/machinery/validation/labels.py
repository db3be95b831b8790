"""Label keys and values as Kubernetes checks them (apimachinery `api/validate/content`: `IsLabelKey`, `IsLabelValue`).

Contract: `label_key_errors(key)` and `label_value_errors(value)` return the
list of Kubernetes' own error strings, word for word, or [] when valid. The
one implementation of these rules: metadata validation (labels, annotation
keys, finalizers: `runtime.machinery.validation.names`) and selector parsing
(`runtime.machinery.selectors`) both call it. A label key is what Kubernetes also
calls a *qualified name* (`IsQualifiedName = IsLabelKey`).

Rules:

- a key is `[prefix/]name`: the name 1 to 63 bytes of
  `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`; the optional prefix a
  lowercase RFC 1123 subdomain of at most 253 bytes; more than one `/` is
  one error of its own;
- a value is empty, or at most 63 bytes of the same pattern as a name.

Lengths are UTF-8 bytes, not characters: Go's `len()` on a string counts
bytes (a lone surrogate counts as the 3 bytes of the U+FFFD Go decodes it
to). The patterns are ASCII-only, so a non-ASCII key or value is invalid
whatever its length; a long one gets both the length and the pattern error,
as in Kubernetes. Patterns match the whole string: a trailing newline is
invalid (Go's `$`, unlike Python's, does not match before one).

Pure: no I/O, imports nothing from the project.
"""

from __future__ import annotations

import re

__all__ = ["label_key_errors", "label_value_errors", "LABEL_NAME_MAX_BYTES", "LABEL_VALUE_MAX_BYTES",
           "LABEL_PREFIX_MAX_BYTES"]

LABEL_NAME_MAX_BYTES = 63
"""The longest name part of a label key, in UTF-8 bytes."""
LABEL_VALUE_MAX_BYTES = 63
"""The longest label value, in UTF-8 bytes."""
LABEL_PREFIX_MAX_BYTES = 253
"""The longest prefix of a label key (a DNS subdomain), in UTF-8 bytes."""

_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE_FMT = f"({_KEY_FMT})?"
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_KEY_RE, _VALUE_RE = re.compile(_KEY_FMT), re.compile(_VALUE_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
              "'-', '_' or '.', and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                          "characters, '-' or '.', and must start and end with an alphanumeric character")


def _bytes(text: str) -> int:
    """Go's `len(s)`: the UTF-8 length; a lone surrogate counts as U+FFFD would (3 bytes)."""
    return len(text.encode("utf-8", "surrogatepass"))


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Go's `RegexError`, its double spaces included: `msg (e.g. 'a',  or 'b', regex used ...)`."""
    shown = "".join(("" if i == 0 else " or ") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(n: int) -> str:
    """`content.MaxLenError`."""
    return f"must be no more than {n} bytes"


def _subdomain_errors(value: str) -> list[str]:
    """`content.IsDNS1123Subdomain`: at most 253 bytes, lowercase RFC 1123 labels joined by dots."""
    errs = [_max_len_error(LABEL_PREFIX_MAX_BYTES)] if _bytes(value) > LABEL_PREFIX_MAX_BYTES else []
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(key: str) -> list[str]:
    """Return why `key` is not a label key (qualified name), in Kubernetes' words; [] if valid.

    Example: ``label_key_errors("a/b/c")`` is the single "a valid label key
    ... with an optional DNS subdomain prefix and '/'" message.
    """
    parts = key.split("/")
    if len(parts) > 2:
        return ["a valid label key " + _regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    errs: list[str] = []
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + e for e in _subdomain_errors(parts[0]))
    name = parts[-1]
    if not name:
        errs.append("name part must be non-empty")
    elif _bytes(name) > LABEL_NAME_MAX_BYTES:
        errs.append("name part " + _max_len_error(LABEL_NAME_MAX_BYTES))
    if not _KEY_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """Return why `value` is not a label value (empty, or <= 63 bytes of the pattern); [] if valid."""
    errs = [_max_len_error(LABEL_VALUE_MAX_BYTES)] if _bytes(value) > LABEL_VALUE_MAX_BYTES else []
    if not _VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
