"""The annotations Kubernetes reads off a Pod or a pod template (`ValidatePodSpecificAnnotations`).

- `kubernetes.io/config.mirror` only with `spec.nodeName` (`must set
  spec.nodeName if mirror pod annotation is set`);
- `controller.kubernetes.io/pod-deletion-cost` a 32-bit integer, written
  without a leading `+` or `0` (`must be a 32bit integer`);
- the legacy seccomp annotations (`seccomp.security.alpha.kubernetes.io/pod`,
  `container.seccomp.security.alpha.kubernetes.io/<name>`): `runtime/default`,
  `docker/default`, `unconfined` or `localhost/<relative path>` (`must be a
  valid seccomp profile`), at `annotations.<key>` as Kubernetes writes it;
- the AppArmor annotations (`container.apparmor.security.beta.kubernetes.io/
  <name>`): a container of that name, and `runtime/default`, `unconfined` or
  `localhost/<profile>`.

Paths under the annotations' own (`metadata.annotations`, `spec.template.annotations`).
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid
from runtime.machinery.validation.gofmt import go_quote
from runtime.server.kinds.pods.podspec_common import local_descending_path

__all__ = ["pod_annotation_errors"]

_MIRROR = "kubernetes.io/config.mirror"
_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_CONTAINER = "container.apparmor.security.beta.kubernetes.io/"
_INT = re.compile(r"0|-[0-9]+|[1-9][0-9]*")  # strconv.ParseInt after validFirstDigit


def _deletion_cost_ok(value: str) -> bool:
    """helper.GetDeletionCostFromPodAnnotations: a first digit that is no `0` (but `0` itself), an int32."""
    return bool(_INT.fullmatch(value)) and -(1 << 31) <= int(value) < 1 << 31


def _seccomp(profile: str, path: str) -> list[FieldError]:
    if profile in ("runtime/default", "docker/default", "unconfined"):
        return []
    if profile.startswith("localhost/"):
        return local_descending_path(profile[len("localhost/"):], path)
    return [invalid(path, profile, "must be a valid seccomp profile")]


def _container_names(spec: dict[str, Any]) -> set[str]:
    return {c.get("name") for key in ("containers", "initContainers", "ephemeralContainers")
            for c in spec.get(key) or [] if isinstance(c, dict)}


def pod_annotation_errors(annotations: dict[str, str] | None, spec: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidatePodSpecificAnnotations` (pod deletion cost checked, as for a Pod and for templates alike)."""
    annotations = annotations or {}
    errs: list[FieldError] = []
    if _MIRROR in annotations and not spec.get("nodeName"):
        errs.append(invalid(f"{path}[{_MIRROR}]", annotations[_MIRROR],
                            "must set spec.nodeName if mirror pod annotation is set"))
    if _DELETION_COST in annotations and not _deletion_cost_ok(annotations[_DELETION_COST]):
        errs.append(invalid(f"{path}[{_DELETION_COST}]", annotations[_DELETION_COST], "must be a 32bit integer"))
    if _SECCOMP_POD in annotations:
        errs += _seccomp(annotations[_SECCOMP_POD], f"{path}.{_SECCOMP_POD}")
    names = _container_names(spec)
    for key, value in annotations.items():
        if key.startswith(_SECCOMP_CONTAINER):
            errs += _seccomp(value, f"{path}.{key}")
        elif key.startswith(_APPARMOR_CONTAINER):
            container = key[len(_APPARMOR_CONTAINER):]
            if container not in names:
                errs.append(invalid(f"{path}[{key}]", container, "container not found"))
            if value not in ("", "runtime/default", "unconfined") and not value.startswith("localhost/"):
                errs.append(invalid(f"{path}[{key}]", value, f"invalid AppArmor profile name: {go_quote(value)}"))
    return errs
