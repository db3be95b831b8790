"""A pod spec's containers as Kubernetes validates them (`validateContainers`, `validateInitContainers`,
`validateContainerCommon` and what they call).

- `containers` required (at least one); names required, DNS-1123 labels,
  unique across `containers` and `initContainers` (`Duplicate value`);
  `image` required; `terminationMessagePolicy` (`File`,
  `FallbackToLogsOnError`) and `imagePullPolicy` (`Always`, `IfNotPresent`,
  `Never`) required and supported;
- ports: `containerPort` required and 1-65535, `hostPort` 1-65535, protocol
  `TCP`, `UDP` or `SCTP`, names IANA service names and unique in the
  container; host ports unique (protocol, host IP, port) across containers,
  within each init container;
- env and envFrom (`podspec_env`), resources (`podspec_resources`);
- volumeMounts name a valid volume (`Not found`), a `mountPath` required and
  unique, relative `subPath`s without `..`, `subPath` xor `subPathExpr`,
  `mountPropagation` supported (`Bidirectional` only when privileged);
  volumeDevices name a claim-backed volume, unique, apart from the mounts;
- probes: exactly one handler (`exec.command`, `httpGet` path, port and
  scheme, `tcpSocket` and `grpc` ports), non-negative timings, liveness and
  startup `successThreshold` 1, no `terminationGracePeriodSeconds` on
  readiness; lifecycle hooks one handler each;
- `restartPolicy` forbidden on containers, `Always` only on init containers,
  which without it may have no probes nor lifecycle;
- securityContext: user and group IDs in range, `procMount`, `seccompProfile`,
  no `allowPrivilegeEscalation: false` with `privileged` or `CAP_SYS_ADMIN`;
- ephemeral containers (`validateEphemeralContainers`): the common rules, an
  image without surrounding whitespace, names unique among all containers, a
  `targetContainerName` that is a container or init container, no ports,
  resources, probes, lifecycle nor restart policy, no `subPath(Expr)` mounts.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import duplicate, forbidden, invalid, nonnegative, not_supported, required
from runtime.machinery.validation.gofmt import GoText, go_value
from runtime.server.kinds.pods.podspec_common import (
    dns_label, group_id, http_header_name, local_descending_path, no_backsteps, not_found,
    exactly_one_of, port_name_errors, port_num_or_name, port_number, protocol_errors, user_id,
)
from runtime.server.kinds.pods.podspec_env import validate_env, validate_env_from
from runtime.server.kinds.pods.podspec_resources import validate_resources

__all__ = ["validate_containers", "validate_init_containers", "validate_ephemeral_containers",
           "seccomp_profile_errors", "host_port_conflicts"]

_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
_PROPAGATIONS = ["Bidirectional", "HostToContainer", "None"]
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_NOT_FOR_INIT = "may not be set for init containers without restartPolicy=Always"
#: EphemeralContainerCommon's fields an ephemeral container may not set, in the struct's order
#: (`allowedEphemeralContainerFields`' false entries and the fields it does not list).
_NOT_FOR_EPHEMERAL = ("ports", "resources", "resizePolicy", "restartPolicy", "livenessProbe", "readinessProbe",
                      "startupProbe", "lifecycle")
_NOT_FOR_EPHEMERAL_MSG = "cannot be set for an Ephemeral Container"


def _ports(ports: list[dict[str, Any]], path: str) -> list[FieldError]:
    """`validateContainerPorts`."""
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"{path}[{i}]"
        if name := port.get("name"):
            if problems := port_name_errors(name):
                errs += [invalid(f"{at}.name", name, msg) for msg in problems]
            elif name in names:
                errs.append(duplicate(f"{at}.name", name))
            else:
                names.add(name)
        if not port.get("containerPort"):
            errs.append(required(f"{at}.containerPort"))
        else:
            errs += port_number(port["containerPort"], f"{at}.containerPort")
        if port.get("hostPort"):
            errs += port_number(port["hostPort"], f"{at}.hostPort")
        errs += protocol_errors(port.get("protocol"), f"{at}.protocol")
    return errs


def host_port_conflicts(containers: list[dict[str, Any]], path: str) -> list[FieldError]:
    """`checkHostPortConflicts`: each `protocol/hostIP/hostPort` once."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, container in enumerate(containers):
        for j, port in enumerate(container.get("ports") or []):
            if not port.get("hostPort"):
                continue
            key = f"{port.get('protocol') or ''}/{port.get('hostIP') or ''}/{port['hostPort']}"
            if key in seen:
                errs.append(duplicate(f"{path}[{i}].ports[{j}].hostPort", key))
            seen.add(key)
    return errs


def _mounts(container: dict[str, Any], volumes: dict[str, dict[str, Any]], path: str) -> list[FieldError]:
    """`ValidateVolumeMounts` (its subPath and propagation errors at the list's path, as Kubernetes has it)."""
    errs: list[FieldError] = []
    devices = {d.get("name"): d.get("devicePath") for d in container.get("volumeDevices") or []}
    privileged = bool((container.get("securityContext") or {}).get("privileged"))
    mount_paths: set[str] = set()
    for i, mount in enumerate(container.get("volumeMounts") or []):
        at = f"{path}[{i}]"
        name, mount_path = mount.get("name") or "", mount.get("mountPath") or ""
        if not name:
            errs.append(required(f"{at}.name"))
        if name not in volumes:
            errs.append(not_found(f"{at}.name", name))
        if not mount_path:
            errs.append(required(f"{at}.mountPath"))
        if mount_path in mount_paths:
            errs.append(invalid(f"{at}.mountPath", mount_path, "must be unique"))
        mount_paths.add(mount_path)
        if name in devices:
            errs.append(invalid(f"{at}.name", name, "must not already exist in volumeDevices"))
        if mount_path in devices.values():
            errs.append(invalid(f"{at}.mountPath", mount_path, "must not already exist as a path in volumeDevices"))
        if sub := mount.get("subPath"):
            errs += local_descending_path(sub, f"{path}.subPath")
        if expr := mount.get("subPathExpr"):
            if mount.get("subPath"):
                errs.append(invalid(f"{at}.subPathExpr", expr, "subPathExpr and subPath are mutually exclusive"))
            errs += local_descending_path(expr, f"{path}.subPathExpr")
        if (propagation := mount.get("mountPropagation")) is not None:
            if propagation not in _PROPAGATIONS:
                errs.append(not_supported(f"{path}.mountPropagation", propagation, _PROPAGATIONS))
            if propagation == "Bidirectional" and not privileged:
                errs.append(forbidden(f"{path}.mountPropagation",
                                      "Bidirectional mount propagation is available only to privileged containers"))
    return errs


def _devices(container: dict[str, Any], volumes: dict[str, dict[str, Any]], path: str) -> list[FieldError]:
    """`ValidateVolumeDevices`."""
    errs: list[FieldError] = []
    mounts = {m.get("name"): m.get("mountPath") for m in container.get("volumeMounts") or []}
    names: set[str] = set()
    paths: set[str] = set()
    for i, device in enumerate(container.get("volumeDevices") or []):
        at = f"{path}[{i}]"
        name, device_path = device.get("name") or "", device.get("devicePath") or ""
        volume = volumes.get(name)
        if not name:
            errs.append(required(f"{at}.name"))
        if name in names:
            errs.append(invalid(f"{at}.name", name, "must be unique"))
        if volume is not None and volume.get("persistentVolumeClaim") is None and volume.get("ephemeral") is None:
            errs.append(invalid(f"{at}.name", name,
                                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
        if volume is None:
            errs.append(not_found(f"{at}.name", name))
        if not device_path:
            errs.append(required(f"{at}.devicePath"))
        if device_path in paths:
            errs.append(invalid(f"{at}.devicePath", device_path, "must be unique"))
        if device_path and no_backsteps(device_path, at):
            errs.append(invalid(f"{at}.devicePath", device_path, "can not contain backsteps ('..')"))
        else:
            paths.add(device_path)
        if name in mounts:
            errs.append(invalid(f"{at}.name", name, "must not already exist in volumeMounts"))
        if device_path in mounts.values():
            errs.append(invalid(f"{at}.devicePath", device_path, "must not already exist as a path in volumeMounts"))
        if name:
            names.add(name)
    return errs


def _handler(handler: dict[str, Any], path: str, kinds: tuple[str, ...]) -> list[FieldError]:
    """`validateHandler`: exactly one of `kinds`, each with its own rules."""
    return exactly_one_of(handler, kinds, path, "handler type", lambda kind, action: _action(kind, action, path))


def _action(kind: str, action: dict[str, Any], path: str) -> list[FieldError]:
    """A handler's one action: an exec's command, an httpGet's path, port, scheme and headers, a port."""
    at = f"{path}.{kind}"
    if kind == "exec":
        return [] if action.get("command") else [required(f"{at}.command")]
    if kind == "httpGet":
        errs = [] if action.get("path") else [required(f"{at}.path")]
        errs += port_num_or_name(action.get("port"), f"{at}.port")
        if (scheme := action.get("scheme") or "") not in ("HTTP", "HTTPS"):
            errs.append(not_supported(f"{at}.scheme", scheme, ["HTTP", "HTTPS"]))
        for header in action.get("httpHeaders") or []:
            errs += http_header_name(header.get("name") or "", f"{at}.httpHeaders")
        return errs
    if kind in ("tcpSocket", "grpc"):
        return port_num_or_name(action.get("port") or 0, f"{at}.port")
    return []


def _probe(probe: dict[str, Any] | None, path: str, kind: str) -> list[FieldError]:
    """validateLivenessProbe / validateReadinessProbe / validateStartupProbe."""
    if probe is None:
        return []
    errs = _handler(probe, path, _HANDLERS)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        errs += nonnegative(probe.get(key), f"{path}.{key}")
    grace = probe.get("terminationGracePeriodSeconds")
    if grace is not None and grace <= 0:
        errs.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than 0"))
    if kind == "readinessProbe":
        if grace is not None:
            errs.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, "must not be set for readinessProbes"))
    elif (probe.get("successThreshold") or 0) != 1:
        errs.append(invalid(f"{path}.successThreshold", probe.get("successThreshold") or 0, "must be 1"))
    return errs


def _lifecycle_and_probes(container: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    lifecycle = container.get("lifecycle")
    if lifecycle is not None:
        for hook in ("postStart", "preStop"):
            if lifecycle.get(hook) is not None:
                errs += _handler(lifecycle[hook], f"{path}.lifecycle.{hook}", ("exec", "httpGet", "tcpSocket"))
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        errs += _probe(container.get(kind), f"{path}.{kind}", kind)
    return errs


def seccomp_profile_errors(profile: dict[str, Any] | None, path: str) -> list[FieldError]:
    """`validateSeccompProfileField`."""
    if profile is None:
        return []
    kind = profile.get("type") or ""
    errs: list[FieldError] = []
    if not kind:
        errs.append(required(f"{path}.type", "type is required when seccompProfile is set"))
    elif kind not in ("Localhost", "RuntimeDefault", "Unconfined"):
        errs.append(not_supported(f"{path}.type", kind, ["Localhost", "RuntimeDefault", "Unconfined"]))
    local = profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None:
            errs.append(required(f"{path}.localhostProfile", "must be set when seccomp type is Localhost"))
        else:
            errs += local_descending_path(local, f"{path}.localhostProfile")
    return errs


def _security_context(context: dict[str, Any] | None, path: str) -> list[FieldError]:
    """`ValidateSecurityContext` (privileged containers are allowed: kube-apiserver's --allow-privileged)."""
    if context is None:
        return []
    errs: list[FieldError] = []
    if context.get("runAsUser") is not None:
        errs += user_id(context["runAsUser"], f"{path}.runAsUser")
    if context.get("runAsGroup") is not None:
        errs += group_id(context["runAsGroup"], f"{path}.runAsGroup")
    if (proc := context.get("procMount")) is not None and proc not in ("Default", "Unmasked"):
        errs.append(not_supported(f"{path}.procMount", proc, ["Default", "Unmasked"]))
    errs += seccomp_profile_errors(context.get("seccompProfile"), f"{path}.seccompProfile")
    if context.get("allowPrivilegeEscalation") is False:
        # Kubernetes shows the whole struct (%#v, with pointer addresses); its set fields stand for it here
        shown = GoText("core.SecurityContext{" + ", ".join(
            f"{key[0].upper()}{key[1:]}:{go_value(value)}" for key, value in context.items()
            if isinstance(value, (bool, int, str))) + "}")
        if context.get("privileged"):
            errs.append(invalid(path, shown, "cannot set `allowPrivilegeEscalation` to false and `privileged` to "
                                             "true"))
        if "CAP_SYS_ADMIN" in ((context.get("capabilities") or {}).get("add") or []):
            errs.append(invalid(path, shown, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
                                             "CAP_SYS_ADMIN"))
    return errs


def _common(container: dict[str, Any], volumes: dict[str, dict[str, Any]], path: str) -> list[FieldError]:
    """`validateContainerCommon`."""
    name = container.get("name") or ""
    errs = [required(f"{path}.name")] if not name else dns_label(name, f"{path}.name")
    if not container.get("image"):
        errs.append(required(f"{path}.image"))
    policy = container.get("terminationMessagePolicy") or ""
    if not policy:
        errs.append(required(f"{path}.terminationMessagePolicy"))
    elif policy not in _MESSAGE_POLICIES:
        errs.append(not_supported(f"{path}.terminationMessagePolicy", policy, _MESSAGE_POLICIES))
    errs += _ports(container.get("ports") or [], f"{path}.ports")
    errs += validate_env(container.get("env") or [], f"{path}.env")
    errs += validate_env_from(container.get("envFrom") or [], f"{path}.envFrom")
    errs += _mounts(container, volumes, f"{path}.volumeMounts")
    errs += _devices(container, volumes, f"{path}.volumeDevices")
    pull = container.get("imagePullPolicy") or ""
    if not pull:
        errs.append(required(f"{path}.imagePullPolicy"))
    elif pull not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", pull, _PULL_POLICIES))
    errs += validate_resources(container.get("resources") or {}, f"{path}.resources")
    return errs + _security_context(container.get("securityContext"), f"{path}.securityContext")


def validate_containers(containers: list[dict[str, Any]], volumes: dict[str, dict[str, Any]],
                        path: str) -> list[FieldError]:
    """`validateContainers`: the regular containers at `path` (`spec.containers`)."""
    if not containers:
        return [required(path)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, container in enumerate(containers):
        at = f"{path}[{i}]"
        errs += _common(container, volumes, at)
        name = container.get("name") or ""
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        names.add(name)
        errs += _lifecycle_and_probes(container, at)
        if container.get("restartPolicy") is not None:
            errs.append(forbidden(f"{at}.restartPolicy", "may not be set for non-init containers"))
    return errs + host_port_conflicts(containers, path)


def validate_init_containers(init: list[dict[str, Any]], containers: list[dict[str, Any]],
                             volumes: dict[str, dict[str, Any]], path: str) -> list[FieldError]:
    """`validateInitContainers`: names unique among all containers, restartPolicy `Always` or none."""
    errs: list[FieldError] = []
    names = {c.get("name") or "" for c in containers}
    for i, container in enumerate(init):
        at = f"{path}[{i}]"
        errs += _common(container, volumes, at)
        policy = container.get("restartPolicy")
        if policy is not None and policy != "Always":
            errs.append(not_supported(f"{at}.restartPolicy", policy, ["Always"]))
        name = container.get("name") or ""
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        elif name:
            names.add(name)
        errs += host_port_conflicts([container], path)
        if policy == "Always":
            errs += _lifecycle_and_probes(container, at)
        else:
            errs += [forbidden(f"{at}.{key}", _NOT_FOR_INIT)
                     for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")
                     if container.get(key) is not None]
    return errs


def validate_ephemeral_containers(ephemeral: list[dict[str, Any]], containers: list[dict[str, Any]],
                                  init: list[dict[str, Any]], volumes: dict[str, dict[str, Any]],
                                  path: str) -> list[FieldError]:
    """`validateEphemeralContainers` at `path` (`spec.ephemeralContainers`)."""
    errs: list[FieldError] = []
    others = {c.get("name") or "" for c in containers + init}
    names = set(others)
    for i, container in enumerate(ephemeral):
        at = f"{path}[{i}]"
        errs += _common(container, volumes, at)
        image = container.get("image") or ""
        if image != image.strip():
            errs.append(invalid(f"{at}.image", image, "must not have leading or trailing whitespace"))
        name = container.get("name") or ""
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        names.add(name)
        target = container.get("targetContainerName") or ""
        if target and target not in others:
            errs.append(not_found(f"{at}.targetContainerName", target))
        errs += [forbidden(f"{at}.{key}", _NOT_FOR_EPHEMERAL_MSG) for key in _NOT_FOR_EPHEMERAL
                 if container.get(key) not in (None, {})]
        for j, mount in enumerate(container.get("volumeMounts") or []):
            errs += [forbidden(f"{at}.volumeMounts[{j}].{key}", _NOT_FOR_EPHEMERAL_MSG)
                     for key in ("subPath", "subPathExpr") if mount.get(key)]
    return errs
