"""What label and field selectors share (apimachinery `selection`): the operators and the one error they raise.

Contract: `Operator` holds Kubernetes' operator strings; `SelectorError` (a
`ValueError`) is raised for every malformed selector, its message
Kubernetes' own. `invalid_message` and `aggregate_messages` write those
messages as Go's `field.Invalid(...).Error()` and `utilerrors.Aggregate` do.

Pure: no I/O.

Internal to `runtime.machinery.selectors`: imported by its modules only.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

from runtime.machinery.validation.gofmt import go_json, go_quote

__all__ = [
    "SelectorError", "Operator", "SET_OPERATORS", "EXACT_OPERATORS", "UNARY_OPERATORS",
    "ORDER_OPERATORS", "BINARY_OPERATORS", "invalid_message", "aggregate_messages",
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


SET_OPERATORS = (Operator.IN, Operator.NOT_IN)
EXACT_OPERATORS = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS)
UNARY_OPERATORS = (Operator.EXISTS, Operator.DOES_NOT_EXIST)
ORDER_OPERATORS = (Operator.GREATER_THAN, Operator.LESS_THAN)
BINARY_OPERATORS = (*SET_OPERATORS, *EXACT_OPERATORS, *ORDER_OPERATORS)
"""Kubernetes' listing order, used verbatim in "expected: ..." messages."""


def invalid_message(path: str, bad: Any, detail: str) -> str:
    """Return `field.Invalid(path, bad, detail).Error()`: strings as Go's `%q`, lists as its `json.Marshal`
    (empty: null)."""
    if isinstance(bad, str):
        shown = go_quote(bad)
    else:
        shown = go_json(list(bad)) if bad else "null"
    return f"{path}: Invalid value: {shown}: {detail}"


def aggregate_messages(errors: Iterable[str]) -> str:
    """Return `utilerrors.Aggregate`'s message: one error as is, several de-duplicated in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
