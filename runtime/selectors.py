"""Label and field selectors with Kubernetes' semantics (apimachinery `labels`, `fields`).

Contract:

- `parse_label_selector(text)` parses the `labelSelector` query syntax
  (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`,
  comma = AND) exactly as `labels.Parse` does, validating keys and values, and
  returns a `LabelSelector`. The empty string selects everything.
- `label_selector_from_dict(sel)` converts a `metav1.LabelSelector` dict as
  `metav1.LabelSelectorAsSelector` does: ``None`` selects nothing, ``{}``
  everything.
- `parse_field_selector(text, allowed)` parses the `fieldSelector` syntax
  (`f=v`, `f==v`, `f!=v`, values escaped with `\\`) as `fields.ParseSelector`
  does, optionally restricting field names.
- `requirements_from_review` / `field_requirements_from_review` convert the
  `requirements` lists of the access reviews' selector attributes.

Every malformed input raises `SelectorError` (a `ValueError`) whose message is
Kubernetes' own, e.g. ``unable to parse requirement: <nil>: Invalid value: ...``.

Semantics worth knowing:

- `!=` and `notin` match objects that lack the key; `in`, `=`, `==`, `>` and
  `<` require it. A missing *field* reads as ``""`` (so `f!=x` and `f=` match it).
- `=` and `==` stay distinct operators (Kubernetes prints them as written) but
  match identically. Field selectors normalise `==` to `=`, as Kubernetes does.
- Parsed label requirements are sorted by key and their values sorted and
  de-duplicated; `str()` is `labels.Selector.String()`, the canonical form.
  Field terms keep Kubernetes' order: sorted by their raw text.

The module is pure: no I/O, no clock.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SelectorError", "Operator", "Requirement", "LabelSelector", "FieldRequirement",
    "FieldSelector", "parse_label_selector", "label_selector_from_dict",
    "label_selector_from_set", "parse_field_selector", "requirements_from_review",
    "field_requirements_from_review", "escape_field_value", "unescape_field_value",
    "label_key_errors", "label_value_errors",
]


class SelectorError(ValueError):
    """A selector that cannot be parsed, validated or converted; the message is Kubernetes'."""


class Operator(enum.StrEnum):
    """`selection.Operator`; the values (and `str()`) are Kubernetes' strings."""

    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_SET_OPS = (Operator.IN, Operator.NOT_IN)
_EXACT_OPS = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS)
_UNARY_OPS = (Operator.EXISTS, Operator.DOES_NOT_EXIST)
_ORDER_OPS = (Operator.GREATER_THAN, Operator.LESS_THAN)
# Kubernetes' listing order, used verbatim in "expected: ..." messages.
_BINARY_OPS = (*_SET_OPS, *_EXACT_OPS, *_ORDER_OPS)

# --- validation (apimachinery api/validate/content) -----------------------------

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_LABEL_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', "
                  "and must start and end with an alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                          "characters, '-' or '.', and must start and end with an alphanumeric character")
_INT64 = re.compile(r"[+-]?[0-9]+")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    # Go's validation.RegexError, double spaces included.
    shown = "".join(("" if i == 0 else " or ") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(n: int) -> str:
    return f"must be no more than {n} bytes"


def _subdomain_errors(value: str) -> list[str]:
    errs = [_max_len_error(253)] if len(value.encode()) > 253 else []
    if not re.fullmatch(_DNS1123_SUBDOMAIN_FMT, value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(key: str) -> list[str]:
    """Returns why `key` is not a qualified name (optional DNS-subdomain prefix and `/`); [] if valid."""
    parts = key.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return ["a valid label key "
                + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + e for e in _subdomain_errors(parts[0]))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part " + _max_len_error(63))
    if not re.fullmatch(_LABEL_KEY_FMT, name):
        errs.append("name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT,
                                                "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """Returns why `value` is not a label value (<= 63 bytes, may be empty); [] if valid."""
    errs = [_max_len_error(63)] if len(value.encode()) > 63 else []
    if not re.fullmatch(_LABEL_VALUE_FMT, value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _invalid(path: str, bad: Any, detail: str) -> str:
    # field.Invalid(...).Error(): strings quoted, lists as compact JSON (nil -> null).
    if isinstance(bad, str):
        shown = json.dumps(bad)
    else:
        shown = json.dumps(list(bad), separators=(",", ":")) if bad else "null"
    return f"{path}: Invalid value: {shown}: {detail}"


def _aggregate(errors: list[str]) -> str:
    # utilerrors.Aggregate: one message as is, several de-duplicated in brackets.
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# --- label selectors -------------------------------------------------------------

@dataclass(frozen=True)
class Requirement:
    """One label requirement, validated on construction as `labels.NewRequirement`.

    Raises SelectorError for a bad key or value, or a value count the operator
    does not allow (In/NotIn: >= 1; =, ==, !=, gt, lt: exactly 1; Exists and
    DoesNotExist: none; gt/lt: an integer).
    """

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.operator not in set(Operator):
            supported = ", ".join(json.dumps(o.value) for o in (*_BINARY_OPS, *_UNARY_OPS))
            raise SelectorError(f"operator: Unsupported value: {json.dumps(str(self.operator))}: "
                                f"supported values: {supported}")
        object.__setattr__(self, "operator", Operator(self.operator))
        object.__setattr__(self, "values", tuple(self.values))
        op, vals, errs = self.operator, self.values, []
        if key_errs := label_key_errors(self.key):
            errs.append(_invalid("key", self.key, "; ".join(key_errs)))
        if op in _SET_OPS and not vals:
            errs.append(_invalid("values", vals, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in _EXACT_OPS and len(vals) != 1:
            errs.append(_invalid("values", vals, "exact-match compatibility requires one single value"))
        elif op in _UNARY_OPS and vals:
            errs.append(_invalid("values", vals, "values set must be empty for exists and does not exist"))
        elif op in _ORDER_OPS:
            if len(vals) != 1:
                errs.append(_invalid("values", vals,
                                     "for 'Gt', 'Lt' operators, exactly one value is required"))
            errs.extend(_invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
                        for i, v in enumerate(vals) if _as_int64(v) is None)
        for i, v in enumerate(vals):
            if value_errs := label_value_errors(v):
                errs.append(_invalid(f"values[{i}][{self.key}]", v, "; ".join(value_errs)))
        if errs:
            raise SelectorError(_aggregate(errs))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Returns whether `labels` satisfy this requirement (NotIn, != match a missing key)."""
        has = self.key in labels
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return has and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return not has or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return has
        if op is Operator.DOES_NOT_EXIST:
            return not has
        have = _as_int64(labels[self.key]) if has else None
        want = _as_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        values = ",".join(sorted(self.values))
        if op in _SET_OPS:
            return f"{self.key} {op.value} ({values})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{values}"


def _as_int64(text: str) -> int | None:
    # strconv.ParseInt(s, 10, 64): sign and digits only, 64-bit range.
    if not _INT64.fullmatch(text):
        return None
    n = int(text)
    return n if -(2**63) <= n < 2**63 else None


@dataclass(frozen=True)
class LabelSelector:
    """A conjunction of label requirements, kept sorted by key (stable).

    `selectable=False` is Kubernetes' `labels.Nothing()`: it matches no object
    and prints as ``""``. Build it with `LabelSelector.nothing()`.
    """

    requirements: tuple[Requirement, ...] = ()
    selectable: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", tuple(sorted(self.requirements, key=lambda r: r.key)))

    @classmethod
    def everything(cls) -> LabelSelector:
        """Returns the selector that matches every object (`labels.Everything()`)."""
        return cls()

    @classmethod
    def nothing(cls) -> LabelSelector:
        """Returns the selector that matches no object (`labels.Nothing()`)."""
        return cls((), selectable=False)

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict (Nothing is not empty)."""
        return self.selectable and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Returns whether an object with `labels` (None = no labels) is selected."""
        labels = labels or {}
        return self.selectable and all(r.matches(labels) for r in self.requirements)

    def add(self, *requirements: Requirement) -> LabelSelector:
        """Returns a copy with `requirements` ANDed in (Nothing stays Nothing)."""
        if not self.selectable:
            return self
        return LabelSelector(self.requirements + requirements)

    def exact_match(self, key: str) -> str | None:
        """Returns the one value the first requirement on `key` pins (=, ==, single-value in), else None."""
        for r in self.requirements:
            if r.key == key:
                exact = r.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
                return r.values[0] if exact and len(r.values) == 1 else None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


# --- the label selector parser (labels.Parse) -------------------------------------

_WHITESPACE = " \t\r\n"
_SPECIAL = "=!(),><"


class _Tok(enum.Enum):
    """Lexer tokens other than operators (operators lex to their `Operator`)."""

    ID = "identifier"
    EOS = "end of string"
    OPEN = "("
    CLOSE = ")"
    COMMA = ","
    NOT = "!"


_ID, _EOS, _OPEN, _CLOSE, _COMMA, _NOT = _Tok.ID, _Tok.EOS, _Tok.OPEN, _Tok.CLOSE, _Tok.COMMA, _Tok.NOT
_Token = _Tok | Operator
_SYMBOL_TOKENS: dict[str, _Token] = {
    "(": _OPEN, ")": _CLOSE, ",": _COMMA, "!": _NOT,
    "=": Operator.EQUALS, "==": Operator.DOUBLE_EQUALS, "!=": Operator.NOT_EQUALS,
    ">": Operator.GREATER_THAN, "<": Operator.LESS_THAN,
}
_KEYWORDS = {"in": Operator.IN, "notin": Operator.NOT_IN}


def _lex(text: str) -> list[tuple[_Token, str]]:
    """Splits `text` into (token, literal) pairs ending with an end-of-string token."""
    tokens: list[tuple[_Token, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            tokens.append((_EOS, ""))
            return tokens
        if text[pos] in _SPECIAL:
            # Longest symbol wins: "!=" and "==" over "!" and "=".
            lit = text[pos:pos + 2] if text[pos:pos + 2] in _SYMBOL_TOKENS else text[pos]
            tokens.append((_SYMBOL_TOKENS[lit], lit))
            pos += len(lit)
            continue
        start = pos
        while pos < n and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            pos += 1
        lit = text[start:pos]
        tokens.append((_KEYWORDS.get(lit, _ID), lit))


class _LabelParser:
    """Recursive descent over the tokens, as apimachinery's `Parser`.

    `in` and `notin` are operators only right after a key; elsewhere ("values
    context") they are plain identifiers, so `in in (in)` is valid.
    """

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[_Token, str]:
        tok, lit = self.tokens[min(self.pos, len(self.tokens) - 1)]
        return (_ID if values and tok in _SET_OPS else tok), lit

    def take(self, values: bool = True) -> tuple[_Token, str]:
        item = self.peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.peek()
            if tok is _EOS:
                return reqs
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except SelectorError as e:
                raise SelectorError(f"unable to parse requirement: {e}") from None
            tok, lit = self.take()
            if tok is _EOS:
                return reqs
            if tok is not _COMMA:
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.peek()
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        negated = self.peek()[0] is _NOT
        if negated:
            self.take()
        tok, key = self.take()
        if tok is not _ID:
            raise SelectorError(f"found '{key}', expected: identifier")
        if errs := label_key_errors(key):
            raise SelectorError(_invalid("<nil>", key, "; ".join(errs)))
        if negated:
            return Requirement(key, Operator.DOES_NOT_EXIST)
        if self.peek()[0] in (_EOS, _COMMA):
            return Requirement(key, Operator.EXISTS)
        op, lit = self.take(values=False)
        if op not in _BINARY_OPS:
            expected = ", ".join(o.value for o in _BINARY_OPS)
            raise SelectorError(f"found '{lit}', expected: {expected}")
        values = self.value_set() if op in _SET_OPS else self.exact_value()
        return Requirement(key, op, tuple(sorted(values)))

    def value_set(self) -> set[str]:
        tok, lit = self.take()
        if tok is not _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok is _CLOSE:  # "()" is the set of the empty string
            self.take()
            return {""}
        if tok not in (_ID, _COMMA):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok is _ID:
                values.add(lit)
                nxt, nlit = self.peek()
                if nxt is _CLOSE:
                    self.take()
                    return values
                if nxt is not _COMMA:
                    raise SelectorError(f"found '{nlit}', expected: ',' or ')'")
            elif tok is _COMMA:  # a leading, doubled or trailing comma adds ""
                if not values:
                    values.add("")
                nxt, _ = self.peek()
                if nxt is _CLOSE:
                    values.add("")
                    self.take()
                    return values
                if nxt is _COMMA:
                    self.take()
                    values.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_EOS, _COMMA):  # "a=" pins the empty value
            return {""}
        tok, lit = self.take()
        if tok is not _ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        return {lit}


def parse_label_selector(text: str) -> LabelSelector:
    """Returns the selector `text` denotes (`labels.Parse`); "" selects everything.

    Raises SelectorError on bad syntax, keys or values, with Kubernetes' message.
    """
    return LabelSelector(tuple(_LabelParser(text).parse()))


_DICT_OPS = {"In": Operator.IN, "NotIn": Operator.NOT_IN, "Exists": Operator.EXISTS,
             "DoesNotExist": Operator.DOES_NOT_EXIST}


def _quoted(value: Any) -> str:
    # Go's %q of a string field; an absent field is Go's zero value "".
    return json.dumps(value if isinstance(value, str) else "" if value is None else str(value))


def _string_list(values: Any) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise SelectorError("values: must be a list of strings")
    values = list(values)
    if not all(isinstance(v, str) for v in values):
        raise SelectorError("values: must be a list of strings")
    return values


def _expression(expr: Any) -> Requirement:
    if not isinstance(expr, Mapping):
        raise SelectorError("label selector requirement must be an object")
    op = expr.get("operator")
    if op not in _DICT_OPS:
        # Kubernetes' LabelSelectorAsSelector really says "pod selector" here.
        raise SelectorError(f"{_quoted(op)} is not a valid pod selector operator")
    key = expr.get("key")
    values = tuple(_string_list(expr.get("values")))
    return Requirement(key if isinstance(key, str) else "", _DICT_OPS[op], values)


def label_selector_from_dict(sel: Mapping[str, Any] | None) -> LabelSelector:
    """Returns the selector a `metav1.LabelSelector` dict denotes (`LabelSelectorAsSelector`).

    None selects nothing; a selector with no `matchLabels` and no
    `matchExpressions` selects everything. Raises SelectorError for a bad
    operator, key or value, In/NotIn without values, or Exists/DoesNotExist with values.
    """
    if sel is None:
        return LabelSelector.nothing()
    match_labels = sel.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in match_labels.items()):
        raise SelectorError("matchLabels: must be a map of strings to strings")
    reqs = [Requirement(k, Operator.EQUALS, (v,)) for k, v in match_labels.items()]
    reqs.extend(_expression(e) for e in sel.get("matchExpressions") or ())
    return LabelSelector(tuple(reqs))


def label_selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """Returns the selector matching exactly `labels` (`ValidatedSelectorFromSet`); raises SelectorError."""
    return LabelSelector(tuple(Requirement(k, Operator.EQUALS, (v,)) for k, v in (labels or {}).items()))


def requirements_from_review(reqs: Iterable[Mapping[str, Any]] | None) -> LabelSelector:
    """Returns the selector of an access review's `labelSelector.requirements` (empty: everything).

    Operators are In, NotIn, Exists, DoesNotExist; values only (and then at
    least one) with In and NotIn. Raises SelectorError otherwise.
    """
    return LabelSelector(tuple(_expression(e) for e in reqs or ()))


# --- field selectors (fields.ParseSelector) ---------------------------------------

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


def parse_field_selector(text: str, allowed: Collection[str] | None = None) -> FieldSelector:
    """Returns the field selector `text` denotes; "" selects everything.

    Field names are taken literally (no escaping, no trimming); the first
    operator (`!=`, `==`, `=`) splits a term. With `allowed`, any other field
    name raises SelectorError ``field label not supported: <name>``, checked
    after the whole text parsed, as Kubernetes converts field labels.
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
                raise SelectorError(f"field label not supported: {r.field}")
    return FieldSelector(tuple(reqs))


def field_requirements_from_review(reqs: Iterable[Mapping[str, Any]] | None) -> FieldSelector:
    """Returns the selector of an access review's `fieldSelector.requirements` (empty: everything).

    In and NotIn take exactly one value and become `=` and `!=`; Exists and
    DoesNotExist are not supported yet (as in Kubernetes). Raises SelectorError.
    """
    terms: list[FieldRequirement] = []
    for expr in reqs or ():
        if not isinstance(expr, Mapping):
            raise SelectorError("field selector requirement must be an object")
        op, values = expr.get("operator"), _string_list(expr.get("values"))
        if len(values) > 1:
            raise SelectorError("fieldSelectors do not yet support multiple values")
        if op in ("In", "NotIn"):
            if len(values) != 1:
                raise SelectorError(f"fieldSelectors {'in' if op == 'In' else 'not in'} must have one value")
            sym = Operator.EQUALS if op == "In" else Operator.NOT_EQUALS
            terms.append(FieldRequirement(str(expr.get("key", "")), sym, values[0]))
        elif op in ("Exists", "DoesNotExist"):
            raise SelectorError(f"fieldSelectors do not yet support {op}")
        else:
            raise SelectorError(f"{_quoted(op)} is not a valid field selector operator")
    return FieldSelector(tuple(terms))
