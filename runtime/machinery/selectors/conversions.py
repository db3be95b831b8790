"""Selectors from their API forms: `metav1.LabelSelector`, label sets and the access reviews' requirements.

Contract:

- `label_selector_from_dict(sel)` converts a `metav1.LabelSelector` dict as
  `metav1.LabelSelectorAsSelector` does: ``None`` selects nothing, ``{}``
  everything.
- `label_selector_from_set(labels)` is `labels.ValidatedSelectorFromSet`.
- `requirements_from_review` / `field_requirements_from_review` convert the
  `requirements` lists of the access reviews' `labelSelector` and
  `fieldSelector` attributes.

Each raises `SelectorError` with Kubernetes' message for a bad operator,
key, value or value count. Pure: no I/O.

Internal to `runtime.machinery.selectors`: imported by its modules only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runtime.machinery.selectors.fields import FieldRequirement, FieldSelector
from runtime.machinery.selectors.labels import ParsedLabelSelector, Requirement
from runtime.machinery.selectors.selection import Operator, SelectorError
from runtime.machinery.validation.gofmt import go_quote

__all__ = ["label_selector_from_dict", "label_selector_from_set", "requirements_from_review",
           "field_requirements_from_review"]

_DICT_OPS = {"In": Operator.IN, "NotIn": Operator.NOT_IN, "Exists": Operator.EXISTS,
             "DoesNotExist": Operator.DOES_NOT_EXIST}


def _as_string(value: Any) -> str:
    # a string field as Go holds it: absent is the zero value "".
    return value if isinstance(value, str) else "" if value is None else str(value)


def _string_list(values: Any) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise SelectorError("values: must be a list of strings")
    values = list(values)
    if not all(isinstance(v, str) for v in values):
        raise SelectorError("values: must be a list of strings")
    return values


def _expression(expr: Any) -> Requirement:
    if not isinstance(expr, Mapping):
        raise SelectorError("label selector requirement must be an object")
    op = expr.get("operator")
    if op not in _DICT_OPS:
        # Kubernetes' LabelSelectorAsSelector really says "pod selector" here.
        raise SelectorError(f"{go_quote(_as_string(op))} is not a valid pod selector operator")
    key = expr.get("key")
    values = tuple(_string_list(expr.get("values")))
    return Requirement(key if isinstance(key, str) else "", _DICT_OPS[op], values)


def label_selector_from_dict(sel: Mapping[str, Any] | None) -> ParsedLabelSelector:
    """Returns the selector a `metav1.LabelSelector` dict denotes (`LabelSelectorAsSelector`).

    None selects nothing; a selector with no `matchLabels` and no
    `matchExpressions` selects everything. Raises SelectorError for a bad
    operator, key or value, In/NotIn without values, or Exists/DoesNotExist with values.
    """
    if sel is None:
        return ParsedLabelSelector.nothing()
    match_labels = sel.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in match_labels.items()):
        raise SelectorError("matchLabels: must be a map of strings to strings")
    reqs = [Requirement(k, Operator.EQUALS, (v,)) for k, v in match_labels.items()]
    reqs.extend(_expression(e) for e in sel.get("matchExpressions") or ())
    return ParsedLabelSelector(tuple(reqs))


def label_selector_from_set(labels: Mapping[str, str] | None) -> ParsedLabelSelector:
    """Returns the selector matching exactly `labels` (`ValidatedSelectorFromSet`); raises SelectorError."""
    return ParsedLabelSelector(tuple(Requirement(k, Operator.EQUALS, (v,)) for k, v in (labels or {}).items()))


def requirements_from_review(reqs: Iterable[Mapping[str, Any]] | None) -> ParsedLabelSelector:
    """Returns the selector of an access review's `labelSelector.requirements` (empty: everything).

    Operators are In, NotIn, Exists, DoesNotExist; values only (and then at
    least one) with In and NotIn. Raises SelectorError otherwise.
    """
    return ParsedLabelSelector(tuple(_expression(e) for e in reqs or ()))


def field_requirements_from_review(reqs: Iterable[Mapping[str, Any]] | None) -> FieldSelector:
    """Returns the selector of an access review's `fieldSelector.requirements` (empty: everything).

    In and NotIn take exactly one value and become `=` and `!=`; Exists and
    DoesNotExist are not supported yet (as in Kubernetes). Raises SelectorError.
    """
    terms: list[FieldRequirement] = []
    for expr in reqs or ():
        if not isinstance(expr, Mapping):
            raise SelectorError("field selector requirement must be an object")
        op, values = expr.get("operator"), _string_list(expr.get("values"))
        if len(values) > 1:
            raise SelectorError("fieldSelectors do not yet support multiple values")
        if op in ("In", "NotIn"):
            if len(values) != 1:
                raise SelectorError(f"fieldSelectors {'in' if op == 'In' else 'not in'} must have one value")
            sym = Operator.EQUALS if op == "In" else Operator.NOT_EQUALS
            terms.append(FieldRequirement(str(expr.get("key", "")), sym, values[0]))
        elif op in ("Exists", "DoesNotExist"):
            raise SelectorError(f"fieldSelectors do not yet support {op}")
        else:
            raise SelectorError(f"{go_quote(_as_string(op))} is not a valid field selector operator")
    return FieldSelector(tuple(terms))
