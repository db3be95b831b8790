"""Resource lists (`{"requests.cpu": Quantity, ...}`) and Kubernetes' quota arithmetic on them.

As `k8s.io/apiserver/pkg/quota/v1/resources.go`: `add` and `subtract`
key by key, `mask` to some names, `less_than_or_equal` against a hard
limit (with the names exceeded), `pretty` as quota's messages print a list
(`pods=1,requests.cpu=500m`, sorted by name). `parse_list` reads a list as
stored (quantities as text); a malformed quantity is left out (validation
refuses it on write: what is stored parses).
"""

from __future__ import annotations

from typing import Any, Iterable

from runtime.machinery.quantity import ZERO, Quantity, QuantityError, parse_quantity

__all__ = ["ResourceList", "parse_list", "to_text", "add", "subtract", "mask", "less_than_or_equal", "is_zero",
           "negative_names", "equal", "pretty", "pretty_names", "maximum"]

ResourceList = dict[str, Quantity]


def parse_list(stored: Any) -> ResourceList:
    """A stored resource list (name -> quantity text) parsed; malformed entries left out."""
    out: ResourceList = {}
    for name, text in (stored or {}).items() if isinstance(stored, dict) else ():
        try:
            out[name] = parse_quantity(text) if not isinstance(text, (int, float)) else parse_quantity(str(text))
        except QuantityError:
            continue
    return out


def to_text(items: ResourceList) -> dict[str, str]:
    """The list as stored: canonical quantity text by name."""
    return {name: str(q) for name, q in sorted(items.items())}


def add(a: ResourceList, b: ResourceList) -> ResourceList:
    """Key by key sum (a key of either is in the result)."""
    out = dict(a)
    for name, q in b.items():
        out[name] = out.get(name, ZERO) + q
    return out


def subtract(a: ResourceList, b: ResourceList) -> ResourceList:
    """Key by key difference (a key of either is in the result)."""
    out = dict(a)
    for name, q in b.items():
        out[name] = out.get(name, ZERO) - q
    return out


def maximum(a: ResourceList, b: ResourceList) -> ResourceList:
    """Key by key the larger (a key of either is in the result)."""
    out = dict(a)
    for name, q in b.items():
        if name not in out or q.value > out[name].value:
            out[name] = q
    return out


def mask(items: ResourceList, names: Iterable[str]) -> ResourceList:
    """Only the entries named."""
    keep = set(names)
    return {name: q for name, q in items.items() if name in keep}


def less_than_or_equal(a: ResourceList, b: ResourceList) -> tuple[bool, list[str]]:
    """Whether every entry of `a` that `b` limits is within it; the names exceeded, sorted."""
    exceeded = sorted(name for name, q in a.items() if name in b and q.value > b[name].value)
    return not exceeded, exceeded


def is_zero(items: ResourceList) -> bool:
    return all(q.value == 0 for q in items.values())


def negative_names(items: ResourceList) -> list[str]:
    return sorted(name for name, q in items.items() if q.value < 0)


def equal(a: ResourceList, b: ResourceList) -> bool:
    """Same names, same values (formats aside, as `quota.Equals`)."""
    return a.keys() == b.keys() and all(a[name].value == b[name].value for name in a)


def pretty(items: ResourceList) -> str:
    """`a=1,b=2Gi`, sorted by name (quota's prettyPrint)."""
    return ",".join(f"{name}={items[name]}" for name in sorted(items))


def pretty_names(names: Iterable[str]) -> str:
    return ",".join(sorted(names))
