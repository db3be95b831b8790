"""JSON patch (RFC 6902): add, remove, replace, move, copy, test.

`apply_json_patch(doc, operations)` returns a new document; the input is never
touched and a failing operation leaves nothing applied (all-or-nothing).

Written here rather than wrapping the `jsonpatch` library (which also passes
the RFC suites) so that errors carry Kubernetes' codes and words: apiserver
runs evanphx/json-patch, where a patch that is not a JSON array of objects is
400, an operation that does not apply is 422 with evanphx's message
("testing value /a failed: test failed"), and more than 10000 operations is
413; `jsonpatch`'s exceptions map onto neither. Where evanphx v4 departs from
the RFC (replace of a missing object key succeeds, `add` without `value` adds
null, negative array indices) this follows the RFC; every enabled case of
json-patch-tests passes.

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from runtime.machinery.patch.errors import MalformedPatch, PatchNotApplicable, TooManyOperations

__all__ = ["apply_json_patch", "json_equal", "MAX_JSON_PATCH_OPERATIONS"]

MAX_JSON_PATCH_OPERATIONS = 10000  # apiserver's maxJSONPatchOperations

_INDEX = re.compile(r"0|[1-9][0-9]*")
_GO_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


class _Missing(Exception):
    """A path that does not resolve; turned into the operation's own message."""


class _BadIndex(_Missing):
    """An array index that is malformed or out of range."""


def apply_json_patch(doc: Any, operations: list[Any] | bytes | str) -> Any:
    """Apply an RFC 6902 patch to `doc` and return the patched copy.

    `operations` is the decoded array or its JSON text. Works on any JSON
    value; Kubernetes objects are dicts in and out.

    Raises MalformedPatch when the patch is not a JSON array of objects,
    TooManyOperations above 10000 operations, PatchNotApplicable when an
    operation does not apply (missing path, bad index, failed `test`, unknown `op`).
    """
    ops = _decode(operations)
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise TooManyOperations("The allowed maximum operations in a JSON patch is %d, got %d"
                                % (MAX_JSON_PATCH_OPERATIONS, len(ops)))
    result = copy.deepcopy(doc)
    for op in ops:
        result = _apply_operation(result, op)
    return result


def _decode(operations: list[Any] | bytes | str) -> list[dict[str, Any]]:
    if isinstance(operations, (bytes, bytearray, str)):
        try:
            operations = json.loads(operations)
        except ValueError as e:
            raise MalformedPatch(f"invalid JSON patch: {e}") from None
    if operations is None:  # Go decodes `null` into an empty patch
        return []
    if not isinstance(operations, list):
        raise MalformedPatch("json: cannot unmarshal %s into Go value of type jsonpatch.Patch"
                         % _go_type(operations))
    for op in operations:
        if op is not None and not isinstance(op, dict):
            raise MalformedPatch("json: cannot unmarshal %s into Go value of type jsonpatch.Operation"
                             % _go_type(op))
    return [op or {} for op in operations]


def _go_type(value: Any) -> str:
    return _GO_JSON_TYPES.get(type(value), "value")


def _apply_operation(doc: Any, op: dict[str, Any]) -> Any:
    kind = op.get("op")
    if not isinstance(kind, str):
        kind = "unknown"
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise PatchNotApplicable(f"Unexpected kind: {kind}")
    return handler(doc, op)


def _pointer(op: dict[str, Any], member: str, kind: str) -> tuple[str, list[str]]:
    """The JSON pointer in `op[member]` and its unescaped tokens (RFC 6901)."""
    raw = op.get(member)
    if not isinstance(raw, str):
        raise PatchNotApplicable(f"{kind} operation failed to decode {member}: missing value")
    if raw == "":
        return raw, []
    if not raw.startswith("/"):
        raise PatchNotApplicable(f'{kind} operation does not apply: doc is missing path: "{raw}": missing value')
    tokens = raw[1:].split("/")
    for token in tokens:
        if re.search(r"~(?![01])", token):
            raise PatchNotApplicable(f"{kind} operation does not apply: invalid JSON pointer: {raw}")
    return raw, [t.replace("~1", "/").replace("~0", "~") for t in tokens]


def _value(op: dict[str, Any], kind: str) -> Any:
    if "value" not in op:
        raise PatchNotApplicable(f"{kind} operation does not apply: missing value field: missing value")
    return copy.deepcopy(op["value"])


def _index(token: str, length: int, *, for_insert: bool) -> int:
    if not _INDEX.fullmatch(token):
        raise _BadIndex(f"value was not a proper array index: '{token}'")
    idx = int(token)
    if idx > length or (idx == length and not for_insert):
        raise _BadIndex(f"Unable to access invalid index: {idx}: invalid index referenced")
    return idx


def _child(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise _Missing(token)
        return node[token]
    if isinstance(node, list):
        return node[_index(token, len(node), for_insert=False)]
    raise _Missing(token)


def _resolve(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens:
        node = _child(node, token)
    return node


def _parent(doc: Any, tokens: list[str], kind: str, path: str) -> dict[str, Any] | list[Any]:
    """The container holding the last token; PatchError when it does not exist."""
    try:
        parent = _resolve(doc, tokens[:-1])
    except _Missing:
        parent = None
    if not isinstance(parent, (dict, list)):
        raise PatchNotApplicable(f'{kind} operation does not apply: doc is missing path: "{path}": missing value')
    return parent


def _add_at(doc: Any, tokens: list[str], value: Any, kind: str, path: str) -> Any:
    if not tokens:
        return value
    parent = _parent(doc, tokens, kind, path)
    key = tokens[-1]
    if isinstance(parent, dict):
        parent[key] = value
    elif key == "-":
        parent.append(value)
    else:
        try:
            parent.insert(_index(key, len(parent), for_insert=True), value)
        except _BadIndex as e:
            raise PatchNotApplicable(f"error in {kind} for path: '{path}': {e}") from None
    return doc


def _remove_at(doc: Any, tokens: list[str], kind: str, path: str) -> Any:
    """Remove and return the value at `tokens`."""
    if not tokens:
        raise PatchNotApplicable(f'{kind} operation does not apply: doc is missing path: "{path}": missing value')
    parent = _parent(doc, tokens, kind, path)
    key = tokens[-1]
    if isinstance(parent, dict):
        if key not in parent:
            raise PatchNotApplicable(f"error in {kind} for path: '{path}': "
                             f"Unable to remove nonexistent key: {key}: missing value")
        return parent.pop(key)
    try:
        return parent.pop(_index(key, len(parent), for_insert=False))
    except _BadIndex as e:
        raise PatchNotApplicable(f"error in {kind} for path: '{path}': {e}") from None


def _op_add(doc: Any, op: dict[str, Any]) -> Any:
    path, tokens = _pointer(op, "path", "add")
    return _add_at(doc, tokens, _value(op, "add"), "add", path)


def _op_remove(doc: Any, op: dict[str, Any]) -> Any:
    path, tokens = _pointer(op, "path", "remove")
    _remove_at(doc, tokens, "remove", path)
    return doc


def _op_replace(doc: Any, op: dict[str, Any]) -> Any:
    path, tokens = _pointer(op, "path", "replace")
    value = _value(op, "replace")
    try:
        _resolve(doc, tokens)
    except _Missing:
        raise PatchNotApplicable(f"replace operation does not apply: doc is missing key: {path}: missing value") from None
    if not tokens:
        return value
    parent = _parent(doc, tokens, "replace", path)
    key = tokens[-1]
    parent[key if isinstance(parent, dict) else int(key)] = value  # type: ignore[index]
    return doc


def _op_move(doc: Any, op: dict[str, Any]) -> Any:
    source, from_tokens = _pointer(op, "from", "move")
    path, tokens = _pointer(op, "path", "move")
    try:
        _resolve(doc, from_tokens)
    except _Missing:
        raise PatchNotApplicable(f"move operation does not apply: doc is missing from path: {source}: missing value") from None
    if tokens[:len(from_tokens)] == from_tokens and len(tokens) > len(from_tokens):
        raise PatchNotApplicable(f"move operation does not apply: cannot move {source} into its own child {path}")
    if tokens == from_tokens:
        return doc
    value = _remove_at(doc, from_tokens, "move", source)
    return _add_at(doc, tokens, value, "move", path)


def _op_copy(doc: Any, op: dict[str, Any]) -> Any:
    source, from_tokens = _pointer(op, "from", "copy")
    path, tokens = _pointer(op, "path", "copy")
    try:
        value = copy.deepcopy(_resolve(doc, from_tokens))
    except _Missing:
        raise PatchNotApplicable(f"copy operation does not apply: doc is missing from path: {source}: missing value") from None
    return _add_at(doc, tokens, value, "copy", path)


def _op_test(doc: Any, op: dict[str, Any]) -> Any:
    path, tokens = _pointer(op, "path", "test")
    expected = _value(op, "test")
    try:
        actual = _resolve(doc, tokens)
    except _Missing:
        raise PatchNotApplicable(f"test operation does not apply: is missing path: {path}: missing value") from None
    if not json_equal(actual, expected):
        raise PatchNotApplicable(f"testing value {path} failed: test failed")
    return doc


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 == 1.0), booleans never equal numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


_HANDLERS = {"add": _op_add, "remove": _op_remove, "replace": _op_replace,
             "move": _op_move, "copy": _op_copy, "test": _op_test}
