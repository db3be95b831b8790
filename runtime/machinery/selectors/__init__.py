"""Label and field selectors with Kubernetes' semantics (apimachinery `labels`, `fields`).

Contract:

- `parse_label_selector(text)` parses the `labelSelector` query syntax
  (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`,
  comma = AND) exactly as `labels.Parse` does, validating keys and values, and
  returns a `ParsedLabelSelector`. The empty string selects everything.
- `label_selector_from_dict(sel)` converts a `metav1.LabelSelector` dict as
  `metav1.LabelSelectorAsSelector` does: ``None`` selects nothing, ``{}``
  everything.
- `parse_field_selector(text, allowed)` parses the `fieldSelector` syntax
  (`f=v`, `f==v`, `f!=v`, values escaped with `\\`) as `fields.ParseSelector`
  does, optionally restricting field names.
- `requirements_from_review` / `field_requirements_from_review` convert the
  `requirements` lists of the access reviews' selector attributes.
- `label_key_errors` / `label_value_errors` are the one label validator
  (`runtime.machinery.validation.labels`), which metadata validation uses too.

Every malformed input raises `SelectorError` (a `ValueError`) whose message is
Kubernetes' own, e.g. ``unable to parse requirement: <nil>: Invalid value: ...``.

Semantics worth knowing:

- `!=` and `notin` match objects that lack the key; `in`, `=`, `==`, `>` and
  `<` require it. A missing *field* reads as ``""`` (so `f!=x` and `f=` match it).
- `=` and `==` stay distinct operators (Kubernetes prints them as written) but
  match identically. Field selectors normalise `==` to `=`, as Kubernetes does.
- Parsed label requirements are sorted by key and their values sorted and
  de-duplicated; `str()` is `labels.Selector.String()`, the canonical form.
  Field terms keep Kubernetes' order: sorted by their raw text.
- Key and value lengths are UTF-8 bytes (Go's `len()`), not characters.

Modules, one concept each: `selection` (operators, the error), `labels`
(requirements and label selectors), `parser` (the query syntax), `fields`
(field selectors), `conversions` (metav1 and access-review forms). Import
from this package; its names are the surface.

The package is pure: no I/O, no clock.
"""

from runtime.machinery.selectors.conversions import (
    field_requirements_from_review, label_selector_from_dict, label_selector_from_set, requirements_from_review,
)
from runtime.machinery.selectors.fields import (
    FieldRequirement, FieldSelector, escape_field_value, parse_field_selector, unescape_field_value,
)
from runtime.machinery.selectors.labels import ParsedLabelSelector, Requirement
from runtime.machinery.selectors.parser import parse_label_selector
from runtime.machinery.selectors.selection import Operator, SelectorError
from runtime.machinery.validation.labels import label_key_errors, label_value_errors

__all__ = [
    "SelectorError", "Operator", "Requirement", "ParsedLabelSelector", "FieldRequirement",
    "FieldSelector", "parse_label_selector", "label_selector_from_dict",
    "label_selector_from_set", "parse_field_selector", "requirements_from_review",
    "field_requirements_from_review", "escape_field_value", "unescape_field_value",
    "label_key_errors", "label_value_errors",
]
