"""CEL optionals, as far as `optionalOldSelf` rules need them (cel-go's optional types library).

A rule with `optionalOldSelf: true` runs on create too, with `oldSelf` an
empty optional (on update, one holding the old value), as Kubernetes 1.33
does under validation ratcheting. `Optional` is the value; `FUNCTIONS`
are its methods, added to the evaluation (`Program.evaluate(functions=)`):
`hasValue()`, `value()` (an empty one fails: `optional.none() dereference`),
`orValue(default)`, and `optional.of(x)` / `optional.none()` (`optional`
is bound to `OPTIONAL`, the namespace value).

Caveats: the `?.` and `[?]` selectors and `optional.ofNonZeroValue` are not
parsed (celpy's grammar has no optional syntax).
"""

from __future__ import annotations

from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

__all__ = ["Optional", "OPTIONAL", "FUNCTIONS"]


class Optional:
    """A CEL `optional_type` value: empty, or holding `value`."""

    __slots__ = ("value", "has_value")

    def __init__(self, value: Any = None, has_value: bool = False) -> None:
        self.value = value
        self.has_value = has_value

    @classmethod
    def of(cls, value: Any) -> "Optional":
        return cls(value, True) if value is not None else cls()


class _Namespace:
    """The value of the identifier `optional` (so `optional.of(x)` is a method call on it)."""


OPTIONAL = _Namespace()


def _value(opt: Optional) -> Any:
    if not opt.has_value:
        return CELEvalError("optional.none() dereference")
    return opt.value


FUNCTIONS = {
    "hasValue": lambda opt: celtypes.BoolType(opt.has_value),
    "value": _value,
    "orValue": lambda opt, default: opt.value if opt.has_value else default,
    "of": lambda _namespace, value: Optional(value, True),
    "none": lambda _namespace: Optional(),
}
