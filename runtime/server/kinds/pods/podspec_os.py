"""What a pod spec with `os.name` may not set (Kubernetes' `validateLinux`, `validateWindows`).

- `linux`: no `windowsOptions`, the pod's nor a container's (`windows
  options cannot be set for a linux pod`);
- `windows`: none of the Linux-only settings, the pod's (`securityContext`'s
  `seLinuxOptions`, `seccompProfile`, `fsGroup`, `fsGroupChangePolicy`,
  `sysctls`, `runAsUser`, `runAsGroup`, `supplementalGroups`; the spec's
  `hostUsers`, `hostPID`, `hostIPC`, `shareProcessNamespace`) nor a
  container's (`seLinuxOptions`, `seccompProfile`, `capabilities`,
  `readOnlyRootFilesystem`, `privileged`, `allowPrivilegeEscalation`,
  `procMount`, `runAsUser`, `runAsGroup`): `cannot be set for a windows pod`.

Containers in Kubernetes' visiting order: init, regular, ephemeral.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden

__all__ = ["os_errors"]

_WINDOWS_MSG = "cannot be set for a windows pod"
_POD_CONTEXT = ("seLinuxOptions", "seccompProfile", "fsGroup", "fsGroupChangePolicy", "sysctls", "runAsUser",
                "runAsGroup", "supplementalGroups")
_CONTAINER_CONTEXT = ("seLinuxOptions", "seccompProfile", "capabilities", "readOnlyRootFilesystem", "privileged",
                      "allowPrivilegeEscalation", "procMount", "runAsUser", "runAsGroup")


def _containers(spec: dict[str, Any], path: str) -> list[tuple[dict[str, Any], str]]:
    return [(c, f"{path}.{key}[{i}]") for key in ("initContainers", "containers", "ephemeralContainers")
            for i, c in enumerate(spec.get(key) or [])]


def _set(value: Any) -> bool:
    return value is not None and value is not False and value != []


def os_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """The OS-specific rules of `spec` whose `os.name` is valid (`linux` or `windows`)."""
    name = (spec.get("os") or {}).get("name")
    context = spec.get("securityContext") or {}
    errs: list[FieldError] = []
    if name == "linux":
        if context.get("windowsOptions") is not None:
            errs.append(forbidden(f"{path}.securityContext.windowsOptions",
                                  "windows options cannot be set for a linux pod"))
        for container, at in _containers(spec, path):
            if (container.get("securityContext") or {}).get("windowsOptions") is not None:
                errs.append(forbidden(f"{at}.securityContext.windowsOptions",
                                      "windows options cannot be set for a linux pod"))
        return errs
    # Kubernetes' order: seLinuxOptions, the host namespaces, the rest of the pod's context
    if _set(context.get("seLinuxOptions")):
        errs.append(forbidden(f"{path}.securityContext.seLinuxOptions", _WINDOWS_MSG))
    if spec.get("hostUsers") is not None:
        errs.append(forbidden(f"{path}.hostUsers", _WINDOWS_MSG))
    errs += [forbidden(f"{path}.{key}", _WINDOWS_MSG) for key in ("hostPID", "hostIPC") if spec.get(key)]
    for key in _POD_CONTEXT[1:5]:
        if _set(context.get(key)):
            errs.append(forbidden(f"{path}.securityContext.{key}", _WINDOWS_MSG))
    if spec.get("shareProcessNamespace") is not None:
        errs.append(forbidden(f"{path}.shareProcessNamespace", _WINDOWS_MSG))
    for key in _POD_CONTEXT[5:]:
        if _set(context.get(key)):
            errs.append(forbidden(f"{path}.securityContext.{key}", _WINDOWS_MSG))
    for container, at in _containers(spec, path):
        container_context = container.get("securityContext") or {}
        errs += [forbidden(f"{at}.securityContext.{key}", _WINDOWS_MSG) for key in _CONTAINER_CONTEXT
                 if container_context.get(key) is not None]
    return errs
