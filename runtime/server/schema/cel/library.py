"""The Kubernetes CEL libraries that x-kubernetes-validations rules call.

cel-python (celpy) brings the CEL standard library: operators, `size`,
`has()`, `contains`, `startsWith`, `endsWith`, `matches` (RE2), the macros
`all`/`exists`/`exists_one`/`map`/`filter`, conversions, timestamps and
durations. Kubernetes adds more; this module supplies, as plain functions
celpy dispatches on (`x.f(a)` calls `f(x, a)`):

- cel-go's strings extension (v2): `charAt`, `indexOf`, `lastIndexOf`,
  `lowerAscii`, `upperAscii`, `replace`, `split`, `substring`, `trim`,
  `join`, `reverse`;
- Kubernetes' lists library: `isSorted`, `sum`, `min`, `max`, `indexOf`,
  `lastIndexOf` (on lists);
- Kubernetes' regex library: `find`, `findAll` (RE2).

Caveats: the URL, IP/CIDR, quantity, authorizer, format and semver
libraries and CEL optionals (`?.`, `optional.of`) are not provided; a rule
calling them fails to compile or evaluate ("undeclared reference").
Strings index by code point, as cel-go does.

Internal to `runtime.server.schema.cel`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import re2
from celpy import celtypes
from celpy.evaluation import CELEvalError

__all__ = ["KUBERNETES_FUNCTIONS"]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


def _err(message: str) -> CELEvalError:
    return CELEvalError(message)


def _no_overload(name: str) -> CELEvalError:
    return _err(f"no such overload: {name}")


def _char_at(s: Any, i: Any) -> Any:
    if not isinstance(s, str) or isinstance(i, bool) or not isinstance(i, int):
        return _no_overload("charAt")
    if i < 0 or i > len(s):
        return _err(f"index out of range: {int(i)}")
    return celtypes.StringType(s[i] if i < len(s) else "")


def _index_of(x: Any, sub: Any, offset: Any = None) -> Any:
    if isinstance(x, list):
        for i, v in enumerate(x):
            if v == sub:
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    if not isinstance(x, str) or not isinstance(sub, str):
        return _no_overload("indexOf")
    start = 0 if offset is None else int(offset)
    if start < 0 or start > len(x):
        return _err(f"index out of range: {start}")
    return celtypes.IntType(x.find(sub, start))


def _last_index_of(x: Any, sub: Any, offset: Any = None) -> Any:
    if isinstance(x, list):
        for i in range(len(x) - 1, -1, -1):
            if x[i] == sub:
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    if not isinstance(x, str) or not isinstance(sub, str):
        return _no_overload("lastIndexOf")
    end = len(x) if offset is None else int(offset)
    if end < 0 or end > len(x):
        return _err(f"index out of range: {end}")
    return celtypes.IntType(x.rfind(sub, 0, end + len(sub)))


def _ascii(fn: Callable[[str], str], name: str) -> Callable[[Any], Any]:
    def convert(s: Any) -> Any:
        if not isinstance(s, str):
            return _no_overload(name)
        return celtypes.StringType("".join(fn(c) if c.isascii() else c for c in s))
    return convert


def _replace(s: Any, old: Any, new: Any, n: Any = None) -> Any:
    if not (isinstance(s, str) and isinstance(old, str) and isinstance(new, str)):
        return _no_overload("replace")
    count = -1 if n is None else int(n)
    return celtypes.StringType(s.replace(old, new, count) if count >= 0 else s.replace(old, new))


def _split(s: Any, sep: Any, n: Any = None) -> Any:
    if not (isinstance(s, str) and isinstance(sep, str)):
        return _no_overload("split")
    limit = -1 if n is None else int(n)
    if limit == 0:
        return celtypes.ListType([])
    if sep == "":
        chars = list(s)
        parts = chars if limit < 0 or limit >= len(chars) else chars[:limit - 1] + ["".join(chars[limit - 1:])]
    else:
        parts = s.split(sep, limit - 1) if limit > 0 else s.split(sep)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(s: Any, start: Any, end: Any = None) -> Any:
    if not isinstance(s, str):
        return _no_overload("substring")
    stop = len(s) if end is None else int(end)
    begin = int(start)
    if begin < 0 or begin > len(s):
        return _err(f"index out of range: {begin}")
    if stop < 0 or stop > len(s):
        return _err(f"index out of range: {stop}")
    if begin > stop:
        return _err(f"invalid substring range. start: {begin}, end: {stop}")
    return celtypes.StringType(s[begin:stop])


def _trim(s: Any) -> Any:
    if not isinstance(s, str):
        return _no_overload("trim")
    return celtypes.StringType(s.strip())


def _join(items: Any, sep: Any = "") -> Any:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items) or not isinstance(sep, str):
        return _no_overload("join")
    return celtypes.StringType(sep.join(items))


def _reverse(s: Any) -> Any:
    if not isinstance(s, str):
        return _no_overload("reverse")
    return celtypes.StringType(s[::-1])


def _comparable(items: Any, name: str) -> CELEvalError | None:
    if not isinstance(items, list):
        return _no_overload(name)
    return None


def _is_sorted(items: Any) -> Any:
    if (problem := _comparable(items, "isSorted")) is not None:
        return problem
    try:
        return celtypes.BoolType(all(items[i] <= items[i + 1] for i in range(len(items) - 1)))
    except TypeError:
        return _no_overload("isSorted")


def _sum(items: Any) -> Any:
    if (problem := _comparable(items, "sum")) is not None:
        return problem
    if not items:
        return celtypes.IntType(0)
    total = items[0]
    try:
        for v in items[1:]:
            total = total + v
    except TypeError:
        return _no_overload("sum")
    return total


def _extreme(pick: Callable[..., Any], name: str) -> Callable[..., Any]:
    def extreme(items: Any, *more: Any) -> Any:
        values = [items, *more] if more or not isinstance(items, list) else items
        if not values:
            return _err(f"{name}(list) argument must not be empty")
        try:
            return pick(values)
        except TypeError:
            return _no_overload(name)
    return extreme


def _find(s: Any, pattern: Any) -> Any:
    if not (isinstance(s, str) and isinstance(pattern, str)):
        return _no_overload("find")
    try:
        match = re2.compile(pattern, options=_OPTIONS).search(s)
    except re2.error as exc:
        return _err(f"compilation of regex failed: {exc}")
    return celtypes.StringType(match.group(0) if match else "")


def _find_all(s: Any, pattern: Any, n: Any = None) -> Any:
    if not (isinstance(s, str) and isinstance(pattern, str)):
        return _no_overload("findAll")
    try:
        found = [m.group(0) for m in re2.compile(pattern, options=_OPTIONS).finditer(s)]
    except re2.error as exc:
        return _err(f"compilation of regex failed: {exc}")
    if n is not None and int(n) >= 0:
        found = found[: int(n)]
    return celtypes.ListType([celtypes.StringType(f) for f in found])


KUBERNETES_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": _char_at,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": _ascii(str.lower, "lowerAscii"),
    "upperAscii": _ascii(str.upper, "upperAscii"),
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": _trim,
    "join": _join,
    "reverse": _reverse,
    "isSorted": _is_sorted,
    "sum": _sum,
    "max": _extreme(max, "max"),
    "find": _find,
    "findAll": _find_all,
}
