"""Kubernetes' `resource.Quantity`: a fixed-point number with a unit suffix (`100m`, `1Gi`, `1.5e3`).

`parse_quantity(text)` reads one as Kubernetes' `resource.ParseQuantity`
does and returns a `Quantity`: its exact value (a `Fraction`, rounded up to
the nearest nano unit, as Kubernetes keeps at most nine decimals) and its
format, from the suffix: binary (`Ki`..`Ei`), decimal exponent (`e3`,
`E-6`) or decimal SI (`n`, `u`, `m`, none, `k`..`E`). `str(q)` is its
canonical form, what kube-apiserver writes back (`Quantity.String`): `1000m`
is `1`, `0.5` is `500m`, `2048Ki` is `2Mi`, `1.5Gi` (not a whole number of
bytes in binary units) is `1610612736`.

Malformed text raises `QuantityError` with Kubernetes' message
(`quantities must match the regular expression ...`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Quantity", "QuantityError", "parse_quantity", "canonical_quantity", "QUANTITY_PATTERN", "ZERO"]

QUANTITY_PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_FORM = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)", re.S)
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_EXPONENT = re.compile(r"[eE]([-+]?[0-9]+)")
_NANO = Fraction(1, 10**9)

BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"


class QuantityError(ValueError):
    """Text that is not a quantity; the message is Kubernetes' (`resource.ErrFormatWrong`)."""

    def __init__(self) -> None:
        super().__init__(f"quantities must match the regular expression '{QUANTITY_PATTERN}'")


@dataclass(frozen=True, order=False)
class Quantity:
    """A parsed quantity: `value` exactly (nano-rounded up) and the `format` its canonical form keeps."""

    value: Fraction
    format: str = DECIMAL_SI

    def __str__(self) -> str:
        return _canonical(self.value, self.format)

    def __lt__(self, other: "Quantity") -> bool:
        return self.value < other.value

    def __le__(self, other: "Quantity") -> bool:
        return self.value <= other.value

    def milli(self) -> int:
        """The value in thousandths, rounded up (Kubernetes' `MilliValue`)."""
        return math.ceil(self.value * 1000)

    def __add__(self, other: "Quantity") -> "Quantity":
        """The sum, in this quantity's format (a zero takes the other's, as Kubernetes' `Quantity.Add`)."""
        return Quantity(self.value + other.value, other.format if self.value == 0 else self.format)

    def __sub__(self, other: "Quantity") -> "Quantity":
        """The difference, in this quantity's format (a zero takes the other's, as `Quantity.Sub`)."""
        return Quantity(self.value - other.value, other.format if self.value == 0 else self.format)

    def __neg__(self) -> "Quantity":
        return Quantity(-self.value, self.format)


#: Zero, in the decimal format (what a sum starts from).
ZERO = Quantity(Fraction(0))


def parse_quantity(text: str) -> Quantity:
    """`text` as a Quantity (see the module doc); raises QuantityError when it is none."""
    if not isinstance(text, str) or not text or not re.fullmatch(QUANTITY_PATTERN, text):
        raise QuantityError()
    sign, whole, frac, suffix = _FORM.fullmatch(text).groups()  # type: ignore[union-attr]
    frac = frac or ""
    if not whole and not frac:
        raise QuantityError()
    number = Fraction(int(whole or "0") * 10**len(frac) + int(frac or "0"), 10**len(frac))
    if suffix in _BINARY:
        value, fmt = number * 2**_BINARY[suffix], BINARY_SI
    elif suffix in _DECIMAL:
        value, fmt = number * Fraction(10) ** _DECIMAL[suffix], DECIMAL_SI
    elif (exp := _EXPONENT.fullmatch(suffix)) is not None:
        value, fmt = number * Fraction(10) ** int(exp.group(1)), DECIMAL_EXPONENT
    else:
        raise QuantityError()
    if sign == "-":
        value = -value
    # Kubernetes keeps nine decimals at most, rounding away from zero.
    if value.denominator != 1 and (value / _NANO).denominator != 1:
        nanos = math.ceil(abs(value) / _NANO)
        value = nanos * _NANO if value > 0 else -nanos * _NANO
    return Quantity(value, fmt)


def canonical_quantity(text: str) -> str:
    """The canonical form of quantity `text` (raises QuantityError)."""
    return str(parse_quantity(text))


def _canonical(value: Fraction, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
        fmt = DECIMAL_SI  # small or fractional binary values are written in decimal, as Kubernetes does
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if fmt == BINARY_SI:
        n = int(magnitude)
        shift = 0
        while shift < 60 and n % 1024 == 0:
            n //= 1024
            shift += 10
        suffix = next((s for s, b in _BINARY.items() if b == shift), "")
        return f"{sign}{n}{suffix}"
    # Decimal: the smallest exponent, a multiple of 3 from -9, that leaves a whole mantissa, then zeros in
    # groups of three moved into the exponent.
    exponent = -9
    mantissa = int(magnitude * 10**9)
    while mantissa % 1000 == 0 and (fmt == DECIMAL_EXPONENT or exponent < 18):
        mantissa //= 1000
        exponent += 3
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{mantissa}{_DECIMAL_SUFFIX[exponent]}"
