"""The pod spec's defaulting and validation, which a Pod and every pod template (Deployments, Jobs, ...) share.

The functions other kinds call (their signatures are the contract):

- `default_pod_spec(spec)`: Kubernetes' `SetDefaults_PodSpec` and its parts' defaults (containers, volumes,
  probes, ports...), in place;
- `default_pod_template(template)`: a pod template's (`template.spec` as above);
- `validate_pod_spec(spec, path)`: `ValidatePodSpec`, field paths under `path` (`spec`,
  `spec.template.spec`);
- `validate_pod_template_spec(template, path)`: `ValidatePodTemplateSpec` (its labels and annotations, and
  its spec), under `path` (`spec.template`).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError

__all__ = ["default_pod_spec", "default_pod_template", "validate_pod_spec", "validate_pod_template_spec"]


def default_pod_spec(spec: dict[str, Any]) -> None:
    """Kubernetes' pod spec defaults, in place."""


def default_pod_template(template: dict[str, Any]) -> None:
    """A pod template's defaults, in place."""
    spec = template.get("spec")
    if isinstance(spec, dict):
        default_pod_spec(spec)


def validate_pod_spec(spec: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidatePodSpec`'s errors, field paths under `path`."""
    return []


def validate_pod_template_spec(template: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidatePodTemplateSpec`'s errors, field paths under `path`."""
    return validate_pod_spec(template.get("spec") or {}, f"{path}.spec")
