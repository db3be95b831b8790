"""Validation of a metav1 `LabelSelector` (apimachinery's `ValidateLabelSelector`)."""

from __future__ import annotations

from typing import Any

from runtime.validation.fielderrors import FieldError, forbidden, invalid, required

__all__ = ["label_selector_errors"]


def label_selector_errors(sel: dict[str, Any], path: str) -> list[FieldError]:
    """metav1 LabelSelector rules for `matchExpressions` (operators and their values), at `path`."""
    errs: list[FieldError] = []
    for i, expr in enumerate(sel.get("matchExpressions") or []):
        at = f"{path}.matchExpressions[{i}]"
        op = expr.get("operator")
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
    return errs
