"""Stock informer indexes: objects by label, and label selectors answered from that index.

`LABEL_INDEX` files an object under `key=value` for each of its labels and
under `key` alone for each key (a label key never holds `=`, so the two
forms cannot collide). `by_label_selector(informer, selector)` answers a
label selector from it: the candidates of the selector's most selective
positive requirement (`=`, `==`, `in`: the buckets of its values; `exists`,
`gt`, `lt`: the bucket of its key), each then checked against the whole
selector. So the cost is O(those candidates), not O(the cache).

Example::

    informer.add_indexers({LABEL_INDEX: label_index_values})
    picked = by_label_selector(informer, label_selector_from_dict({"matchLabels": {"team": "a"}}))

Caveats:
    A selector with no positive requirement (`{}`, which selects everything,
    or only `!=`, `notin`, `!key`) cannot be narrowed by the index: it visits
    every cached object, as `Informer.list()` does.
"""

from __future__ import annotations

from typing import Any

from runtime.client.interface import object_meta
from runtime.controller.informer import Informer
from runtime.machinery.selectors import Operator, ParsedLabelSelector, Requirement

__all__ = ["LABEL_INDEX", "label_index_values", "by_label_selector"]

#: The name of the label index (see the module docs).
LABEL_INDEX = "labels"

_VALUE_OPERATORS = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
_KEY_OPERATORS = (Operator.EXISTS, Operator.GREATER_THAN, Operator.LESS_THAN)


def label_index_values(obj: dict[str, Any]) -> list[str]:
    """The label index values of `obj`: `key=value` and `key` for each label."""
    labels = object_meta(obj).get("labels") or {}
    return [f"{k}={v}" for k, v in labels.items()] + list(labels)


def _buckets(requirement: Requirement) -> list[str] | None:
    """The index values whose union holds every object `requirement` matches (None: no such values)."""
    if requirement.operator in _VALUE_OPERATORS:
        return [f"{requirement.key}={v}" for v in requirement.values]
    if requirement.operator in _KEY_OPERATORS:
        return [requirement.key]
    return None


def by_label_selector(informer: Informer, selector: ParsedLabelSelector) -> list[dict[str, Any]]:
    """Cached objects `selector` matches, in no particular order, through `LABEL_INDEX` (see the module docs).

    Raises KeyError when the informer has no `LABEL_INDEX`.
    """
    if not selector.selectable:
        return []
    best: list[str] | None = None
    best_size = 0
    for requirement in selector.requirements:
        values = _buckets(requirement)
        if values is None:
            continue
        size = sum(informer.index_size(LABEL_INDEX, v) for v in values)
        if best is None or size < best_size:
            best, best_size = values, size
    if best is None:
        candidates = informer.list()
    else:
        # Values of one key are disjoint buckets (an object has one value per key): no duplicates.
        candidates = [obj for value in best for obj in informer.by_index(LABEL_INDEX, value)]
    return [obj for obj in candidates if selector.matches(object_meta(obj).get("labels") or {})]
