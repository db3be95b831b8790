"""Semantic validation as Kubernetes does it: each broken rule is a field error.

A body that decodes (types are right) but breaks a rule is answered 422
Invalid with one cause per error. Type errors are found earlier by the
decoder (`runtime.server.registry.decode`) and are 400. This package holds the
rules every kind shares (names, ObjectMeta, label selectors); a kind's own
rules live in its strategy (`runtime.server.kinds`).
"""

from runtime.machinery.validation.fielderrors import FieldError, invalid_error
from runtime.machinery.validation.labelselector import label_selector_errors
from runtime.machinery.validation.names import (
    is_dns1123_label, is_dns1123_subdomain, is_path_segment_name, validate_object_meta,
)

__all__ = [
    "FieldError", "invalid_error", "is_dns1123_label", "is_dns1123_subdomain",
    "is_path_segment_name", "validate_object_meta", "label_selector_errors",
]
