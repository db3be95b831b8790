"""Validation ratcheting (Kubernetes 1.33, CRDValidationRatcheting GA): an update may keep an invalid value.

On UPDATE of a custom resource, an error found at a node of the new object
is not reported when that node is unchanged from the old object. "Unchanged"
is Kubernetes' `CorrelatedObject` (apiserver/pkg/cel/common/equality.go):

- `Correlation(new, old, schema)` pairs a node with its old value.
  `key(name)` correlates a property (or an additionalProperties value)
  present in both; `index(i)` correlates an item only in an
  `x-kubernetes-list-type: map` list, with the old item of the same keys.
  Items of sets and atomic lists do not correlate (None).
- `equal()` is kube's CachedDeepEqual: maps key by key, map lists item by
  correlated item (so their order does not matter), any other list as a
  unit, scalars by value.
- `should_ratchet(correlation, parent)` is kube's `shouldRatchetError`: the
  node's own correlation when it has one, else its nearest correlated
  ancestor's; a node under no correlation (below `apiVersion` or `kind` at
  the root, which conversion rewrites) never ratchets.
- `ratchets_at(root, path)` finds a field error's node from its path
  (`spec.ports[0].port`, `spec.labels[a]`) and answers the same.

`runtime.server.schema.validation` drops ratcheted OpenAPI errors (kube
merges them as warnings that the custom resource strategy never shows);
`runtime.server.schema.cel.rules` turns a ratcheted CEL error of a rule that
does not use `oldSelf` into a Warning, as kube does. Transition rules are
never ratcheted.

Pure: no I/O; inputs are never modified.
"""

from __future__ import annotations

import re
from typing import Any

from runtime.server.schema.structural.schema import Structural

__all__ = ["Correlation", "should_ratchet", "ratchets_at", "path_steps"]

_STEP = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


class Correlation:
    """A node of the new object and its old value (see the module doc). Caches its children and equality."""

    __slots__ = ("value", "old", "schema", "_children", "_equal", "_by_keys")

    def __init__(self, value: Any, old: Any, schema: Structural | None) -> None:
        self.value = value
        self.old = old
        self.schema = schema
        self._children: dict[Any, Correlation | None] = {}
        self._equal: bool | None = None
        self._by_keys: dict[tuple, Any] | None = None

    def key(self, name: str) -> "Correlation | None":
        """The property `name`, correlated with the old one (None unless both objects have it)."""
        if name in self._children:
            return self._children[name]
        found = None
        s = self.schema
        if s is not None and isinstance(self.value, dict) and isinstance(self.old, dict) \
                and name in self.value and name in self.old:
            child = s.properties.get(name) or s.additional_schema
            if child is not None:
                found = Correlation(self.value[name], self.old[name], child)
        self._children[name] = found
        return found

    def index(self, i: int) -> "Correlation | None":
        """Item `i`, correlated by its map keys in a map list (None in any other list)."""
        if i in self._children:
            return self._children[i]
        found = None
        s = self.schema
        if s is not None and s.items is not None and isinstance(self.value, list) and 0 <= i < len(self.value) \
                and isinstance(self.old, list) and s.x_list_type == "map" and s.x_list_map_keys:
            old_item = self._old_by_keys().get(_map_key(self.value[i], s.x_list_map_keys))
            if old_item is not None:
                found = Correlation(self.value[i], old_item, s.items)
        self._children[i] = found
        return found

    def _old_by_keys(self) -> dict[tuple, Any]:
        if self._by_keys is None:
            keys = self.schema.x_list_map_keys if self.schema is not None else ()
            self._by_keys = {}
            for item in self.old:
                k = _map_key(item, keys)
                if k is not None:
                    self._by_keys.setdefault(k, item)
        return self._by_keys

    def equal(self) -> bool:
        """Whether the node is unchanged (kube's CachedDeepEqual)."""
        if self._equal is None:
            self._equal = self._compare()
        return self._equal

    def _compare(self) -> bool:
        new, old = self.value, self.old
        if new is None or old is None:
            return new is None and old is None
        if isinstance(new, list) and isinstance(old, list):
            if len(new) != len(old):
                return False
            correlates = self.schema is not None and self.schema.x_list_type == "map" and bool(
                self.schema.x_list_map_keys)
            if not correlates:
                return _deep_equal(new, old)  # a set or an atomic list: a unit
            for i in range(len(new)):
                child = self.index(i)
                if child is None or not child.equal():
                    return False
            return True
        if isinstance(new, dict) and isinstance(old, dict):
            if len(new) != len(old):
                return False
            for name in new:
                child = self.key(name)
                if child is None or not child.equal():
                    return False  # a key the old object lacks, or one no schema describes
            return True
        if isinstance(new, (list, dict)) or isinstance(old, (list, dict)):
            return False
        return _deep_equal(new, old)


def _deep_equal(a: Any, b: Any) -> bool:
    """reflect.DeepEqual of JSON values: 1 and 1.0 differ (int64, float64), as do 1 and true."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and _deep_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b))
    return a == b


def _map_key(item: Any, keys: tuple[str, ...]) -> tuple | None:
    if not isinstance(item, dict):
        return None
    return tuple(repr(item.get(k)) for k in keys)


def should_ratchet(correlation: Correlation | None, parent: Correlation | None) -> bool:
    """kube's shouldRatchetError: the node's correlation if it has one, else its nearest correlated ancestor's."""
    node = correlation if correlation is not None else parent
    return node is not None and node.equal()


def path_steps(path: str) -> list[str]:
    """The steps of a field error's path: names and bracketed indexes or keys (`a.b[0][k]` -> a, b, 0, k)."""
    return [name or bracket for name, bracket in _STEP.findall(path)]


def ratchets_at(root: Correlation, path: str) -> bool:
    """Whether an error at `path` (a field error's path from the root) is ratcheted (see the module doc)."""
    current: Correlation | None = root
    parent: Correlation | None = None
    for depth, step in enumerate(path_steps(path)):
        if current is None:
            break  # below the last correlated node: that ancestor decides
        if depth == 0 and step in ("apiVersion", "kind"):
            return False
        if isinstance(current.value, list):
            try:
                child = current.index(int(step))
            except ValueError:
                child = None
        else:
            child = current.key(step)
        parent, current = current, child
    return should_ratchet(current, parent)
