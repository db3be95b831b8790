"""Field selectors (apimachinery `fields.ParseSelector`): `f=v`, `f==v`, `f!=v`, comma = AND.

Contract: `parse_field_selector(text, allowed, unknown)` returns the
`FieldSelector` `text` denotes ("" selects everything), or raises
`SelectorError` with Kubernetes' message; with `allowed`, other field names
are refused with `unknown`'s message (the kind's field label conversion's:
`field label not supported: X` by default).
Values are escaped with `\\` (`escape_field_value`, `unescape_field_value`);
field names are taken literally. `==` is normalised to `=`, as Kubernetes
does, and terms keep Kubernetes' order: sorted by their raw text. A missing
field reads as "" when matching (so `f!=x` and `f=` match it).

Pure: no I/O.

Internal to `runtime.machinery.selectors`: imported by its modules only.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from runtime.machinery.selectors.selection import Operator, SelectorError
from runtime.machinery.validation.gofmt import go_quote

__all__ = ["FieldRequirement", "FieldSelector", "parse_field_selector", "escape_field_value",
           "unescape_field_value"]

@dataclass(frozen=True)
class FieldRequirement:
    """One field term: `field` equals (Operator.EQUALS) or differs from (NOT_EQUALS) `value`."""

    field: str
    operator: Operator
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Returns whether `fields` satisfy the term; a missing field reads as ""."""
        equal = fields.get(self.field, "") == self.value
        return equal if self.operator is Operator.EQUALS else not equal

    def __str__(self) -> str:
        symbol = "=" if self.operator is Operator.EQUALS else "!="
        return f"{self.field}{symbol}{escape_field_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """A conjunction of field terms, in the order Kubernetes keeps them."""

    requirements: tuple[FieldRequirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict."""
        return not self.requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Returns whether an object whose selectable fields are `fields` is selected."""
        return all(r.matches(fields) for r in self.requirements)

    def exact_match(self, field: str) -> str | None:
        """Returns the value the first `field=value` term pins, else None (`RequiresExactMatch`)."""
        for r in self.requirements:
            if r.field == field and r.operator is Operator.EQUALS:
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def escape_field_value(value: str) -> str:
    """Returns `value` with `\\`, `,` and `=` backslash-escaped (`fields.EscapeValue`)."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(text: str) -> str:
    """Returns the literal value of an escaped field-selector value; raises SelectorError.

    Only `\\\\`, `\\,` and `\\=` are escapes; a bare `,` or `=` is an error.
    """
    out: list[str] = []
    chars = iter(text)
    for c in chars:
        if c in ",=":
            # Kubernetes prints the rune with %v, i.e. as its code point number.
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(c)}")
        if c == "\\":
            nxt = next(chars, None)
            if nxt is None or nxt not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{nxt or ''}")
            c = nxt
        out.append(c)
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    # Commas split terms unless escaped; escapes stay in the term for unescaping later.
    terms, start, escaped = [], 0, False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms if text else []


def parse_field_selector(text: str, allowed: Collection[str] | None = None,
                         unknown: str = "field label not supported: {label}") -> FieldSelector:
    """Returns the field selector `text` denotes; "" selects everything.

    Field names are taken literally (no escaping, no trimming); the first
    operator (`!=`, `==`, `=`) splits a term. With `allowed`, any other field
    name raises SelectorError with `unknown` formatted (`{label}` the name,
    `{quoted}` it as Go's %q prints it), checked after the whole text parsed,
    as Kubernetes converts field labels: the kind's conversion's message.
    """
    reqs: list[FieldRequirement] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        match = re.search("!=|==|=", part)
        if match is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        op = Operator.NOT_EQUALS if match.group() == "!=" else Operator.EQUALS
        reqs.append(FieldRequirement(part[:match.start()], op, unescape_field_value(part[match.end():])))
    if allowed is not None:
        for r in reqs:
            if r.field not in allowed:
                raise SelectorError(unknown.format(label=r.field, quoted=go_quote(r.field)))
    return FieldSelector(tuple(reqs))

