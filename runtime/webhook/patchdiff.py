"""`create_patch(before, after)`: the RFC 6902 patch that turns one JSON document into another.

What controller-runtime's `PatchResponseFromRaw` computes (gomodules.xyz/jsonpatch's `CreatePatch`):
`add`, `remove` and `replace` operations only, object members compared key by key and recursively; an
array of the same length is compared element by element, one of another length is replaced whole (a
patch that is always right, if not always the shortest). `carry_unknown` keeps a typed object's patch to the
author's changes (what its model does not declare is not removed). Pure, no I/O.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_patch", "carry_unknown"]


def create_patch(before: Any, after: Any) -> list[dict[str, Any]]:
    """The operations that make `before` equal `after` (empty when they are equal)."""
    ops: list[dict[str, Any]] = []
    _diff(before, after, "", ops)
    return ops


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _diff(a: Any, b: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            if key not in b:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in b.items():
            child = f"{path}/{_escape(key)}"
            if key not in a:
                ops.append({"op": "add", "path": child, "value": value})
            else:
                _diff(a[key], value, child, ops)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{path}/{index}", ops)
        return
    # Scalars (or values of different JSON types): `true` is not `1` (a type check, as Go's decoded values).
    if type(a) is not type(b) or a != b:
        ops.append({"op": "replace", "path": path, "value": b})


def carry_unknown(raw: Any, base: Any, after: Any) -> Any:
    """`after` (a model's dump of the changed object) with what the model did not read kept from `raw` (the
    object as sent) and what the model made up left out, so that only the author's changes differ.

    `base` is the model's dump of `raw` unchanged: a member of `raw` missing from it is one the model does
    not declare (kept as sent); a member of `base` missing from `raw` and unchanged in `after` is the model's
    default (dropped).
    """
    if isinstance(raw, dict) and isinstance(base, dict) and isinstance(after, dict):
        out: dict[str, Any] = {}
        for key, value in after.items():
            if key not in raw:
                if key not in base or base[key] != value:
                    out[key] = value
            else:
                out[key] = carry_unknown(raw[key], base.get(key), value)
        for key, value in raw.items():
            if key not in base and key not in out:
                out[key] = value
        return out
    if isinstance(raw, list) and isinstance(base, list) and isinstance(after, list) \
            and len(raw) == len(base) == len(after):
        return [carry_unknown(r, b, a) for r, b, a in zip(raw, base, after)]
    return after
