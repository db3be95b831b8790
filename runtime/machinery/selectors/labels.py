"""Label requirements and label selectors (apimachinery `labels.Requirement`, `labels.Selector`).

Contract: a `Requirement` is validated on construction as
`labels.NewRequirement` validates it (keys and values by
`runtime.machinery.validation.labels`, the one label validator) and raises
`SelectorError` otherwise; `ParsedLabelSelector` (`labels.Selector`) ANDs
requirements, kept sorted by key. `matches()` follows Kubernetes: `!=` and
`notin` match objects that lack the key; `in`, `=`, `==`, `>` and `<` require
it. `str()` is `labels.Selector.String()`, the canonical form. The wire form,
`metav1.LabelSelector` (matchLabels, matchExpressions), is the model
`runtime.models.meta.LabelSelector`; `label_selector_from_dict` turns it into this.

Pure: no I/O.

Internal to `runtime.machinery.selectors`: imported by its modules only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from runtime.machinery.selectors.selection import (
    BINARY_OPERATORS, EXACT_OPERATORS, ORDER_OPERATORS, SET_OPERATORS, UNARY_OPERATORS, Operator,
    SelectorError, aggregate_messages, invalid_message,
)
from runtime.machinery.validation.gofmt import go_quote
from runtime.machinery.validation.labels import label_key_errors, label_value_errors

__all__ = ["Requirement", "ParsedLabelSelector"]

_INT64 = re.compile(r"[+-]?[0-9]+")


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
            supported = ", ".join(go_quote(o.value) for o in (*BINARY_OPERATORS, *UNARY_OPERATORS))
            raise SelectorError(f"operator: Unsupported value: {go_quote(str(self.operator))}: "
                                f"supported values: {supported}")
        object.__setattr__(self, "operator", Operator(self.operator))
        object.__setattr__(self, "values", tuple(self.values))
        op, vals, errs = self.operator, self.values, []
        if key_errs := label_key_errors(self.key):
            errs.append(invalid_message("key", self.key, "; ".join(key_errs)))
        if op in SET_OPERATORS and not vals:
            errs.append(invalid_message("values", vals, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in EXACT_OPERATORS and len(vals) != 1:
            errs.append(invalid_message("values", vals, "exact-match compatibility requires one single value"))
        elif op in UNARY_OPERATORS and vals:
            errs.append(invalid_message("values", vals, "values set must be empty for exists and does not exist"))
        elif op in ORDER_OPERATORS:
            if len(vals) != 1:
                errs.append(invalid_message("values", vals,
                                            "for 'Gt', 'Lt' operators, exactly one value is required"))
            errs.extend(invalid_message(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
                        for i, v in enumerate(vals) if _as_int64(v) is None)
        for i, v in enumerate(vals):
            if value_errs := label_value_errors(v):
                errs.append(invalid_message(f"values[{i}][{self.key}]", v, "; ".join(value_errs)))
        if errs:
            raise SelectorError(aggregate_messages(errs))

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
        if op in SET_OPERATORS:
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
class ParsedLabelSelector:
    """A conjunction of label requirements, kept sorted by key (stable).

    `selectable=False` is Kubernetes' `labels.Nothing()`: it matches no object
    and prints as ``""``. Build it with `ParsedLabelSelector.nothing()`.
    """

    requirements: tuple[Requirement, ...] = ()
    selectable: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", tuple(sorted(self.requirements, key=lambda r: r.key)))

    @classmethod
    def everything(cls) -> ParsedLabelSelector:
        """Returns the selector that matches every object (`labels.Everything()`)."""
        return cls()

    @classmethod
    def nothing(cls) -> ParsedLabelSelector:
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

    def add(self, *requirements: Requirement) -> ParsedLabelSelector:
        """Returns a copy with `requirements` ANDed in (Nothing stays Nothing)."""
        if not self.selectable:
            return self
        return ParsedLabelSelector(self.requirements + requirements)

    def exact_match(self, key: str) -> str | None:
        """Returns the one value the first requirement on `key` pins (=, ==, single-value in), else None."""
        for r in self.requirements:
            if r.key == key:
                exact = r.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
                return r.values[0] if exact and len(r.values) == 1 else None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)
