"""The annotations Kubernetes checks on a Pod (`pkg/apis/core/validation`: ValidatePodSpecificAnnotations and
ValidatePodSpecificAnnotationUpdates), at `metadata.annotations[<key>]`.

- A mirror pod's annotation (`kubernetes.io/config.mirror`) needs a
  `spec.nodeName`, and no write adds, changes or removes it;
- `controller.kubernetes.io/pod-deletion-cost` is a 32-bit integer (unless
  the stored Pod already had an invalid one);
- no write adds, changes or removes an AppArmor annotation
  (`container.apparmor.security.beta.kubernetes.io/...`).
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid

__all__ = ["annotation_errors", "annotation_update_errors", "MIRROR", "DELETION_COST"]

MIRROR = "kubernetes.io/config.mirror"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_APPARMOR = "container.apparmor.security.beta.kubernetes.io/"
_INT = re.compile(r"[+-]?[0-9]+")


def _path(key: str) -> str:
    return f"metadata.annotations[{key}]"


def _valid_cost(value: str) -> bool:
    """strconv.ParseInt(value, 10, 32) succeeds."""
    return bool(_INT.fullmatch(value)) and -2**31 <= int(value) < 2**31


def annotation_errors(pod: dict[str, Any], *, allow_invalid_cost: bool = False) -> list[FieldError]:
    """ValidatePodSpecificAnnotations' rules above."""
    annotations = pod["metadata"].get("annotations") or {}
    errs: list[FieldError] = []
    if MIRROR in annotations and not (pod.get("spec") or {}).get("nodeName"):
        errs.append(invalid(_path(MIRROR), annotations[MIRROR], "must set spec.nodeName if mirror pod annotation is set"))
    if not allow_invalid_cost and DELETION_COST in annotations and not _valid_cost(annotations[DELETION_COST]):
        errs.append(invalid(_path(DELETION_COST), annotations[DELETION_COST], "must be a 32bit integer"))
    return errs


def annotation_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """ValidatePodSpecificAnnotationUpdates: no mirror or AppArmor annotation changes, then the rules above."""
    now, before = new["metadata"].get("annotations") or {}, old["metadata"].get("annotations") or {}
    errs: list[FieldError] = []
    for key, value in before.items():
        if now.get(key) == value:
            continue
        if key.startswith(_APPARMOR):
            errs.append(forbidden(_path(key), "may not remove or update AppArmor annotations"))
        if key == MIRROR:
            errs.append(forbidden(_path(key), "may not remove or update mirror pod annotation"))
    for key in now.keys() - before.keys():
        if key.startswith(_APPARMOR):
            errs.append(forbidden(_path(key), "may not add AppArmor annotations"))
        if key == MIRROR:
            errs.append(forbidden(_path(key), "may not add mirror pod annotation"))
    cost = before.get(DELETION_COST)
    return errs + annotation_errors(new, allow_invalid_cost=cost is not None and not _valid_cost(cost))
