"""Validation of a metav1 `LabelSelector` (apimachinery's `ValidateLabelSelector`).

Internal to `runtime.machinery.validation`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation.fielderrors import FieldError, forbidden, invalid, required
from runtime.machinery.validation.labels import label_key_errors, label_value_errors

__all__ = ["label_selector_errors"]


def label_selector_errors(sel: dict[str, Any], path: str) -> list[FieldError]:
    """metav1 LabelSelector rules at `path`: `matchLabels` keys and values (at `path.matchLabels`),
    each expression's operator and its values (`path.matchExpressions[i].values`), key and values."""
    errs: list[FieldError] = []
    for key, value in (sel.get("matchLabels") or {}).items():
        errs.extend(invalid(f"{path}.matchLabels", key, p) for p in label_key_errors(key))
        errs.extend(invalid(f"{path}.matchLabels", value, p) for p in label_value_errors(value))
    for i, expr in enumerate(sel.get("matchExpressions") or []):
        at = f"{path}.matchExpressions[{i}]"
        op = expr.get("operator") or ""
        values = expr.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                errs.append(required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(forbidden(f"{at}.values",
                                      "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            errs.append(invalid(f"{at}.operator", op, "not a valid selector operator"))
        key = expr.get("key") or ""
        errs.extend(invalid(f"{at}.key", key, p) for p in label_key_errors(key))
        for j, value in enumerate(values):
            errs.extend(invalid(f"{at}.values[{j}]", value, p) for p in label_value_errors(value))
    return errs
