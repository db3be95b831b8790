"""Field paths and field sets, with Kubernetes' FieldsV1 encoding.

A `Path` is a tuple of `PathElement`s from the object root. An element is

- a field name, `f:metadata` in FieldsV1, `.metadata` when printed;
- a map-list item keyed by its map keys, `k:{"uid":"1"}` (keys sorted,
  compact JSON), printed `[uid="1"]`;
- a set-list item by its value, `v:"a"`, printed `[="a"]`;
- a list item by index, `i:0`, printed `[0]` (only for items that have no key).

A `FieldSet` is a set of paths; membership is exact (owning `.metadata.labels.a`
does not mean owning `.metadata.labels`). FieldsV1 nests the paths as a tree
of objects: a path that is a member and also has members below it carries
`".": {}`; a member with nothing below is `{}`. Encoding sorts entries as
structured-merge-diff does (fields, then keys, then values, then indices), so
the bytes match the apiserver's.

Internal to `runtime.machinery.patch`: imported by its modules only.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from runtime.machinery.patch.errors import CorruptManagedFields

__all__ = ["PathElement", "Path", "FieldSet", "path_string"]

_KIND_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}
#: Field elements made so far, by name: every object's walk names the same few fields, each then made (and its
#: sort key computed) once. Bounded, since label and annotation keys are fields too.
_FIELDS: dict[str, "PathElement"] = {}
_FIELDS_KEPT = 10_000


@dataclass(frozen=True)
class PathElement:
    """One step of a path: `kind` is f (field), k (key), v (value) or i (index).

    `text` is the field name, the canonical JSON of the key object or value,
    or the decimal index; equality of elements is equality of these strings.
    """

    kind: str
    text: str

    @classmethod
    def field(cls, name: str) -> "PathElement":
        pe = _FIELDS.get(name)
        if pe is None:
            pe = cls("f", name)
            if len(_FIELDS) < _FIELDS_KEPT:
                _FIELDS[name] = pe
        return pe

    @classmethod
    def key(cls, fields: dict[str, Any]) -> "PathElement":
        return cls("k", _canonical({k: fields[k] for k in sorted(fields)}))

    @classmethod
    def value(cls, value: Any) -> "PathElement":
        return cls("v", _canonical(value))

    @classmethod
    def index(cls, index: int) -> "PathElement":
        return cls("i", str(index))

    @classmethod
    def parse(cls, text: str) -> "PathElement":
        """Decode a FieldsV1 key (`f:name`, `k:{...}`, `v:...`, `i:N`). Raises PatchError."""
        kind, sep, rest = text.partition(":")
        if not sep or kind not in _KIND_RANK:
            raise CorruptManagedFields(f"unknown path element type in {text!r}")
        if kind == "f":
            return cls.field(rest)
        try:
            decoded = json.loads(rest)
        except ValueError:
            raise CorruptManagedFields(f"invalid path element {text!r}") from None
        if kind == "k":
            if not isinstance(decoded, dict):
                raise CorruptManagedFields(f"invalid path element {text!r}")
            return cls.key(decoded)
        if kind == "v":
            return cls.value(decoded)
        if not isinstance(decoded, int) or isinstance(decoded, bool):
            raise CorruptManagedFields(f"invalid path element {text!r}")
        return cls.index(decoded)

    def fields_v1_key(self) -> str:
        """The element as a FieldsV1 object key."""
        return f"{self.kind}:{self.text}"

    def __str__(self) -> str:
        """The element as Kubernetes prints it in conflict messages (`.rules`, `[uid="1"]`)."""
        if self.kind == "f":
            return "." + self.text
        if self.kind == "k":
            fields = json.loads(self.text)
            return "[" + ",".join(f"{k}={_go_string(v)}" for k, v in fields.items()) + "]"
        if self.kind == "v":
            return f"[={_go_string(json.loads(self.text))}]"
        return f"[{self.text}]"

    @functools.cached_property
    def sort_key(self) -> tuple[Any, ...]:
        if self.kind == "f":
            return (0, self.text)
        if self.kind == "k":
            return (1, tuple((k, _value_rank(v)) for k, v in json.loads(self.text).items()))
        if self.kind == "v":
            return (2, _value_rank(json.loads(self.text)))
        return (3, int(self.text))


Path = tuple[PathElement, ...]


def path_string(path: Path) -> str:
    """A path as Kubernetes prints it: `.metadata.ownerReferences[uid="1"].name`."""
    return "".join(str(pe) for pe in path)


@dataclass(frozen=True)
class FieldSet:
    """An immutable set of field paths (structured-merge-diff's `fieldpath.Set`)."""

    paths: frozenset[Path] = frozenset()

    @classmethod
    def of(cls, paths: Iterable[Path]) -> "FieldSet":
        return cls(frozenset(paths))

    def __contains__(self, path: object) -> bool:
        return path in self.paths

    def __len__(self) -> int:
        return len(self.paths)

    def __bool__(self) -> bool:
        return bool(self.paths)

    def __iter__(self) -> Iterator[Path]:
        """Paths in Kubernetes' order: at each level members first, then the subtrees, sorted."""
        yield from self._ordered(())

    def __or__(self, other: "FieldSet") -> "FieldSet":
        return FieldSet(self.paths | other.paths)

    def __and__(self, other: "FieldSet") -> "FieldSet":
        return FieldSet(self.paths & other.paths)

    def __sub__(self, other: "FieldSet") -> "FieldSet":
        return FieldSet(self.paths - other.paths)

    @functools.cached_property
    def members(self) -> frozenset[PathElement]:
        """Elements that are members at this level (paths of length one)."""
        return frozenset(p[0] for p in self.paths if len(p) == 1)

    @functools.cached_property
    def children(self) -> dict[PathElement, "FieldSet"]:
        """For each first element with deeper paths, the set of those paths below it."""
        below: dict[PathElement, set[Path]] = {}
        for p in self.paths:
            if len(p) > 1:
                below.setdefault(p[0], set()).add(p[1:])
        return {pe: FieldSet(frozenset(ps)) for pe, ps in below.items()}

    def strings(self) -> list[str]:
        """The paths printed (`.metadata.labels.a`), in Kubernetes' iteration order."""
        return [path_string(p) for p in self]

    def to_fields_v1(self) -> dict[str, Any]:
        """The FieldsV1 object (`{"f:metadata":{"f:labels":{"f:a":{}}}}`).

        Built from a tree of the paths in one pass (not from the nested sets
        `members` and `children`): it runs on every write.
        """
        root: dict[PathElement, list[Any]] = {}  # element -> [is a member, the elements below it]
        for path in self.paths:
            level = root
            for pe in path:
                entry = level.get(pe)
                if entry is None:
                    entry = level[pe] = [False, {}]
                level = entry[1]
            entry[0] = True
        return _emit(root)

    @classmethod
    def from_fields_v1(cls, fields: Any) -> "FieldSet":
        """Decode a FieldsV1 object. Raises CorruptManagedFields when it is malformed."""
        if fields is None:
            return cls()
        if not isinstance(fields, dict):
            raise CorruptManagedFields("FieldsV1 must be a JSON object")
        out: set[Path] = set()
        _decode(fields, (), out)
        return cls(frozenset(out))

    def _ordered(self, prefix: Path) -> Iterator[Path]:
        for pe in sorted(self.members, key=_order):
            yield prefix + (pe,)
        for pe in sorted(self.children, key=_order):
            yield from self.children[pe]._ordered(prefix + (pe,))


def _emit(level: dict[PathElement, list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pe in sorted(level, key=_order):
        member, below = level[pe]
        if below:
            child = _emit(below)
            out[pe.fields_v1_key()] = {".": {}, **child} if member else child
        else:
            out[pe.fields_v1_key()] = {}
    return out


def _decode(obj: dict[str, Any], prefix: Path, out: set[Path]) -> None:
    for key, value in obj.items():
        if key == ".":
            continue
        if not isinstance(value, dict):
            raise CorruptManagedFields(f"FieldsV1 entry {key!r} must be a JSON object")
        path = prefix + (PathElement.parse(key),)
        if "." in value or not value:
            out.add(path)
        _decode(value, path, out)


def _order(pe: PathElement) -> tuple[Any, ...]:
    return pe.sort_key


def _canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def _value_rank(value: Any) -> tuple[Any, ...]:
    """structured-merge-diff's value ordering: numbers < strings < booleans < lists < maps < null."""
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, _canonical(value))
    if isinstance(value, dict):
        return (4, _canonical(value))
    return (5, 0)


def _go_string(value: Any) -> str:
    """A value as structured-merge-diff's value.ToString prints it (strings quoted as Go's %q)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return _canonical(value) if isinstance(value, (list, dict)) else str(value)
