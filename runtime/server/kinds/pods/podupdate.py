"""What a write may change of a stored Pod (`pkg/apis/core/validation`: ValidatePodUpdate,
ValidatePodStatusUpdate, ValidatePodEphemeralContainersUpdate).

- `spec_update_errors` (ValidatePodUpdate): the spec is immutable but for
  `containers[*].image` and `initContainers[*].image` (never emptied nor
  padded with spaces; containers are never added or removed:
  `pod updates may not add or remove containers`),
  `activeDeadlineSeconds` (set once, then only lowered, never unset, in
  [0, 2^31-1]), `tolerations` (additions only; an existing one may change
  only its tolerationSeconds), `schedulingGates` (removals only), and
  `terminationGracePeriodSeconds` (1 for a previously negative one). Any
  other change is refused with Kubernetes' message and a diff of the spec
  (`ephemeralContainers` aside: only their subresource writes them).
- `status_update_errors` (ValidatePodStatusUpdate): a nominated node name is
  a DNS subdomain; a container that terminated and may not restart (policy
  Never, or OnFailure after exit 0) is not made non-terminated; pod IPs are
  IPs, one per family, without duplicates.
- `ephemeral_update_errors` (ValidatePodEphemeralContainersUpdate): existing
  ephemeral containers are neither removed nor changed; a static (mirror) pod
  takes none (`static pods do not support ephemeral containers`).
"""

from __future__ import annotations

import copy
import ipaddress
import json
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import duplicate, forbidden, invalid, required
from runtime.machinery.validation.names import DNS1123_SUBDOMAIN_MSG, is_dns1123_subdomain

__all__ = ["spec_update_errors", "status_update_errors", "ephemeral_update_errors", "pod_ip_errors",
           "IMMUTABLE_SPEC_MSG", "MIRROR_POD_ANNOTATION"]

IMMUTABLE_SPEC_MSG = ("pod updates may not change fields other than `spec.containers[*].image`,"
                      "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
                      "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
                      "was previously negative)")
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
_INT32_MAX = 2**31 - 1


def spec_diff(old: Any, new: Any, type_name: str) -> str:
    """A readable diff of two specs, field by field (Kubernetes prints go-cmp's diff of its Go structs)."""
    lines = [f"  {type_name}{{"]
    old, new = old or {}, new or {}
    for key in sorted(set(old) | set(new)):
        if old.get(key) == new.get(key):
            continue
        if key in old:
            lines.append(f"- \t{key}: {json.dumps(old[key], sort_keys=True)},")
        if key in new:
            lines.append(f"+ \t{key}: {json.dumps(new[key], sort_keys=True)},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


def _container_errors(new: list[dict[str, Any]], old: list[dict[str, Any]], path: str) -> tuple[list[FieldError], bool]:
    """ValidateContainerUpdates: (errors, stop): the same containers, each image set and unpadded."""
    if len(new) != len(old):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    errs: list[FieldError] = []
    for i, container in enumerate(new):
        image = container.get("image") or ""
        if not image:
            errs.append(required(f"{path}[{i}].image"))
        if image.strip() != image:
            errs.append(invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace"))
    return errs, False


def _toleration_errors(new: list[dict[str, Any]], old: list[dict[str, Any]], path: str) -> list[FieldError]:
    """validateOnlyAddedTolerations: every old toleration is still there (its tolerationSeconds may change)."""
    for toleration in old:
        if not any(_set(dict(toleration, tolerationSeconds=t.get("tolerationSeconds"))) == _set(t) for t in new):
            return [forbidden(path, "existing toleration can not be modified except its tolerationSeconds")]
    return []


def _set(obj: dict[str, Any]) -> dict[str, Any]:
    """The fields that are set (Go compares structs: an unset field and a null one are the same)."""
    return {k: v for k, v in obj.items() if v is not None}


def _gate_errors(new: list[dict[str, Any]], old: list[dict[str, Any]], path: str) -> list[FieldError]:
    """validateOnlyDeletedSchedulingGates: no gate is added."""
    if not new:
        return []
    had = {g.get("name") for g in old}
    return [forbidden(f"{path}[{i}].name", "only deletion is allowed, but found new scheduling gate "
                                      f"'{g.get('name')}'")
            for i, g in enumerate(new) if g.get("name") not in had]


def spec_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """ValidatePodUpdate's rules on the spec of a Pod `old` written as `new` (see the module doc)."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs: list[FieldError] = []
    for field in ("containers", "initContainers"):
        found, stop = _container_errors(new_spec.get(field) or [], old_spec.get(field) or [], f"spec.{field}")
        errs += found
        if stop:
            return errs
    deadline, old_deadline = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    path = "spec.activeDeadlineSeconds"
    if deadline is not None:
        if not 0 <= deadline <= _INT32_MAX:
            return errs + [invalid(path, deadline, f"must be between 0 and {_INT32_MAX}, inclusive")]
        if old_deadline is not None and old_deadline < deadline:
            return errs + [invalid(path, deadline, "must be less than or equal to previous value")]
    elif old_deadline is not None:
        errs.append(invalid(path, None, "must not update from a positive integer to nil value"))
    errs += _toleration_errors(new_spec.get("tolerations") or [], old_spec.get("tolerations") or [],
                               "spec.tolerations")
    errs += _gate_errors(new_spec.get("schedulingGates") or [], old_spec.get("schedulingGates") or [],
                         "spec.schedulingGates")
    if new_spec == old_spec:
        return errs
    munged = copy.deepcopy(new_spec)
    for field in ("containers", "initContainers"):
        for container, before in zip(munged.get(field) or [], old_spec.get(field) or []):
            _put(container, "image", before.get("image"))
    # Ephemeral containers are their subresource's to change (the Pod's strategy refuses them on a Pod write).
    for field in ("activeDeadlineSeconds", "schedulingGates", "tolerations", "ephemeralContainers"):
        _put(munged, field, old_spec.get(field))
    old_grace = old_spec.get("terminationGracePeriodSeconds")
    if old_grace is not None and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if munged != old_spec:
        errs.append(forbidden("spec", f"{IMMUTABLE_SPEC_MSG}\n{spec_diff(old_spec, munged, 'core.PodSpec')}"))
    return errs


def _put(obj: dict[str, Any], key: str, value: Any) -> None:
    """Set `key` as the old object had it (absent when it had none)."""
    if value is None:
        obj.pop(key, None)
    else:
        obj[key] = copy.deepcopy(value)


def _state_errors(new: list[dict[str, Any]], old: list[dict[str, Any]], path: str, policy: str) -> list[FieldError]:
    """ValidateContainerStateTransition: a terminated container that may not restart stays terminated."""
    if policy == "Always":
        return []
    errs: list[FieldError] = []
    for i, before in enumerate(old):
        terminated = (before.get("state") or {}).get("terminated")
        if terminated is None or (int(terminated.get("exitCode") or 0) != 0 and policy == "OnFailure"):
            continue
        errs += [forbidden(f"{path}[{i}].state", "may not be transitioned to non-terminated state")
                 for after in new if after.get("name") == before.get("name")
                 and (after.get("state") or {}).get("terminated") is None]
    return errs


def pod_ip_errors(status: dict[str, Any]) -> list[FieldError]:
    """validatePodIPs: each an IP, at most one per family, none twice."""
    path = "status.podIPs"
    ips = [entry.get("ip") or "" for entry in status.get("podIPs") or []]
    errs: list[FieldError] = []
    families: list[int] = []
    for i, ip in enumerate(ips):
        try:
            families.append(ipaddress.ip_address(ip).version)
        except ValueError:
            errs.append(invalid(f"{path}[{i}]", ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
    if len(ips) > 1:
        if errs:
            return errs  # Kubernetes' dual-stack check fails on a bad IP: an internal error there
        if len(ips) > 2 or len(set(families)) != 2:
            errs.append(invalid(path, status.get("podIPs"), "may specify no more than one IP for each IP family"))
        seen: set[str] = set()
        for i, ip in enumerate(ips):
            if ip in seen:
                errs.append(duplicate(f"{path}[{i}]", status["podIPs"][i]))
            seen.add(ip)
    return errs


def status_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """ValidatePodStatusUpdate's rules (see the module doc); the spec is the stored one already."""
    status, old_status = new.get("status") or {}, old.get("status") or {}
    errs: list[FieldError] = []
    nominated = status.get("nominatedNodeName") or ""
    if nominated and nominated != (old_status.get("nominatedNodeName") or "") and not is_dns1123_subdomain(nominated):
        for msg in (["must be no more than 253 characters"] if len(nominated) > 253 else []) + [DNS1123_SUBDOMAIN_MSG]:
            errs.append(invalid("status.nominatedNodeName", nominated, msg))
    policy = (old.get("spec") or {}).get("restartPolicy") or "Always"
    for field, rule in (("containerStatuses", policy), ("initContainerStatuses", policy),
                        ("ephemeralContainerStatuses", "Never")):  # ephemeral containers never restart
        errs += _state_errors(status.get(field) or [], old_status.get(field) or [], f"status.{field}", rule)
    return errs + pod_ip_errors(status)


def ephemeral_update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """ValidatePodEphemeralContainersUpdate's own rules (see the module doc)."""
    path = "spec.ephemeralContainers"
    sent = (new.get("spec") or {}).get("ephemeralContainers") or []
    if MIRROR_POD_ANNOTATION in (old["metadata"].get("annotations") or {}) and \
            sent != ((old.get("spec") or {}).get("ephemeralContainers") or []):
        return [forbidden("", "static pods do not support ephemeral containers")]
    now = {c.get("name"): c for c in sent}
    errs: list[FieldError] = []
    for before in (old.get("spec") or {}).get("ephemeralContainers") or []:
        name = before.get("name")
        if name not in now:
            errs.append(forbidden(path, f'existing ephemeral containers "{name}" may not be removed\n'))
        elif now[name] != before:
            errs.append(forbidden(path, f'existing ephemeral containers "{name}" may not be changed\n'
                                        f"{spec_diff(before, now[name], 'core.EphemeralContainer')}"))
    return errs
