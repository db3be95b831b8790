"""The pod spec's scheduling and host settings as Kubernetes validates them.

- `affinity` (`validateAffinity`): node selector terms required and their
  requirements (operators and their values, label keys and values; field
  selectors on `metadata.name` only), preferred terms' weights 1-100; pod
  (anti-)affinity terms' selectors, namespaces and a required `topologyKey`;
- `tolerations` (`ValidateTolerations`): keys label names, an empty key only
  with `Exists`, `Equal` values label values, `Exists` without a value,
  `tolerationSeconds` only with `NoExecute`, effects supported;
- `topologySpreadConstraints`: `maxSkew` positive, `topologyKey` required,
  `whenUnsatisfiable` supported, no pair twice, the label selector;
- `dnsConfig` (`validatePodDNSConfig`): required with `dnsPolicy: None`, at
  most 3 nameservers (IPs), 32 searches (subdomains), options named;
- `securityContext` (`validatePodSpecSecurityContext`): IDs in range,
  shareProcessNamespace not with hostPID, sysctls named and unique and none
  of a namespace shared with the host (`net.*` with hostNetwork, IPC ones
  with hostIPC),
  `fsGroupChangePolicy`, `seccompProfile`;
- `hostAliases` IPs and hostnames, `readinessGates` condition types,
  `schedulingGates` qualified and unique.
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError, label_selector_errors
from runtime.machinery.validation.fielderrors import duplicate, forbidden, invalid, not_supported, required
from runtime.machinery.validation.labels import label_value_errors
from runtime.server.kinds.pods.podspec_common import (
    dns_label, dns_subdomain, group_id, ip_address, qualified_name, subdomain_errors, user_id,
)
from runtime.server.kinds.pods.podspec_containers import seccomp_profile_errors

__all__ = ["validate_affinity", "validate_tolerations", "validate_topology_spread", "validate_dns_config",
           "validate_pod_security_context", "validate_host_aliases", "validate_readiness_gates",
           "validate_scheduling_gates"]

_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
_SYSCTL = re.compile(r"([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?")
_SYSCTL_SHOWN = "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"


def _requirement(req: dict[str, Any], path: str, *, check_values: bool) -> list[FieldError]:
    """`ValidateNodeSelectorRequirement`."""
    errs: list[FieldError] = []
    op, values = req.get("operator") or "", req.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(f"{path}.values",
                                  "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
    errs += qualified_name(req.get("key") or "", f"{path}.key")
    if check_values:
        for i, value in enumerate(values):
            errs += [invalid(f"{path}.values[{i}]", value, msg) for msg in label_value_errors(value)]
    return errs


def _field_requirement(req: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidateNodeFieldSelectorRequirement`: `metadata.name` In/NotIn one node name."""
    errs: list[FieldError] = []
    op, values = req.get("operator") or "", req.get("values") or []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(required(f"{path}.values",
                                 "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    else:
        errs.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
    if req.get("key") != "metadata.name":
        errs.append(invalid(f"{path}.key", req.get("key") or "", "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs += [invalid(f"{path}.values[{i}]", value, msg) for msg in subdomain_errors(value)]
    return errs


def _node_selector_term(term: dict[str, Any], path: str, *, check_values: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, req in enumerate(term.get("matchExpressions") or []):
        errs += _requirement(req, f"{path}.matchExpressions[{j}]", check_values=check_values)
    for j, req in enumerate(term.get("matchFields") or []):
        errs += _field_requirement(req, f"{path}.matchFields[{j}]")
    return errs


def _pod_affinity_term(term: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if term.get("labelSelector") is not None:
        errs += label_selector_errors(term["labelSelector"], f"{path}.labelSelector")
    if term.get("namespaceSelector") is not None:
        errs += label_selector_errors(term["namespaceSelector"], f"{path}.namespaceSelector")
    for name in term.get("namespaces") or []:
        errs += dns_label(name, f"{path}.namespace")
    topology_key = term.get("topologyKey") or ""
    if not topology_key:
        errs.append(required(f"{path}.topologyKey", "can not be empty"))
    return errs + qualified_name(topology_key, f"{path}.topologyKey")


def _weight(weight: Any, path: str) -> list[FieldError]:
    return [] if 0 < (weight or 0) <= 100 else [invalid(path, weight or 0, "must be in the range 1-100")]


def _pod_affinity(affinity: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, term in enumerate(affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
        errs += _pod_affinity_term(term, f"{path}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
    for i, weighted in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        at = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        errs += _weight(weighted.get("weight"), f"{at}.weight")
        errs += _pod_affinity_term(weighted.get("podAffinityTerm") or {}, f"{at}.podAffinityTerm")
    return errs


def validate_affinity(affinity: dict[str, Any] | None, path: str) -> list[FieldError]:
    if affinity is None:
        return []
    errs: list[FieldError] = []
    if (node := affinity.get("nodeAffinity")) is not None:
        at = f"{path}.nodeAffinity"
        if (selector := node.get("requiredDuringSchedulingIgnoredDuringExecution")) is not None:
            terms_path = f"{at}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            terms = selector.get("nodeSelectorTerms") or []
            if not terms:
                errs.append(required(terms_path, "must have at least one node selector term"))
            for i, term in enumerate(terms):
                errs += _node_selector_term(term, f"{terms_path}[{i}]", check_values=True)
        for i, term in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            term_path = f"{at}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            errs += _weight(term.get("weight"), f"{term_path}.weight")
            # invalid label values are allowed in preferred terms: they can still match on a one-node cluster
            errs += _node_selector_term(term.get("preference") or {}, f"{term_path}.preference", check_values=False)
    for kind in ("podAffinity", "podAntiAffinity"):
        if affinity.get(kind) is not None:
            errs += _pod_affinity(affinity[kind], f"{path}.{kind}")
    return errs


def validate_tolerations(tolerations: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        at = f"{path}[{i}]"
        key, op = toleration.get("key") or "", toleration.get("operator") or ""
        value, effect = toleration.get("value") or "", toleration.get("effect") or ""
        if key:
            errs += qualified_name(key, f"{at}.key")
        if not key and op != "Exists":
            errs.append(invalid(f"{at}.operator", op,
                                "operator must be Exists when `key` is empty, which means \"match all values and all "
                                "keys\""))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(invalid(f"{at}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            if problems := label_value_errors(value):
                errs.append(invalid(f"{at}.operator", value, ";".join(problems)))
        elif op == "Exists":
            if value:
                errs.append(invalid(f"{at}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{at}.operator", op, ["Equal", "Exists"]))
        if effect and effect not in _EFFECTS:
            errs.append(not_supported(f"{at}.effect", effect, _EFFECTS))
    return errs


def validate_topology_spread(constraints: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, constraint in enumerate(constraints):
        at = f"{path}[{i}]"
        skew = constraint.get("maxSkew") or 0
        if skew <= 0:
            errs.append(invalid(f"{at}.maxSkew", skew, "must be greater than zero"))
        key, when = constraint.get("topologyKey") or "", constraint.get("whenUnsatisfiable") or ""
        if not key:
            errs.append(required(f"{at}.topologyKey", "can not be empty"))
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{at}.whenUnsatisfiable", when, ["DoNotSchedule", "ScheduleAnyway"]))
        if any((c.get("topologyKey") or "", c.get("whenUnsatisfiable") or "") == (key, when)
               for c in constraints[i + 1:]):
            errs.append(duplicate(f"{at}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {when}}}"))
        if constraint.get("labelSelector") is not None:
            errs += label_selector_errors(constraint["labelSelector"], f"{at}.labelSelector")
    return errs


def validate_dns_config(config: dict[str, Any] | None, policy: str, path: str) -> list[FieldError]:
    if policy == "None":
        if config is None:
            return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not config.get("nameservers"):
            return [required(f"{path}.nameservers",
                             "must provide at least one DNS nameserver when `dnsPolicy` is None")]
    if config is None:
        return []
    errs: list[FieldError] = []
    nameservers, searches = config.get("nameservers") or [], config.get("searches") or []
    if len(nameservers) > 3:
        errs.append(invalid(f"{path}.nameservers", nameservers, "must not have more than 3 nameservers"))
    for i, nameserver in enumerate(nameservers):
        errs += ip_address(nameserver, f"{path}.nameservers[{i}]")
    if len(searches) > 32:
        errs.append(invalid(f"{path}.searches", searches, "must not have more than 32 search paths"))
    if len(" ".join(searches)) > 2048:
        errs.append(invalid(f"{path}.searches", searches,
                            "must not have more than 2048 characters (including spaces) in the search list"))
    for i, search in enumerate(searches):
        errs += dns_subdomain(search.removesuffix("."), f"{path}.searches[{i}]")
    for i, option in enumerate(config.get("options") or []):
        if not option.get("name"):
            errs.append(required(f"{path}.options[{i}]", "must not be empty"))
    return errs


def validate_pod_security_context(context: dict[str, Any] | None, spec: dict[str, Any],
                                  path: str) -> list[FieldError]:
    if context is None:
        return []
    errs: list[FieldError] = []
    for key, check in (("fsGroup", group_id), ("runAsUser", user_id), ("runAsGroup", group_id)):
        if context.get(key) is not None:
            errs += check(context[key], f"{path}.{key}")
    for i, gid in enumerate(context.get("supplementalGroups") or []):
        errs += group_id(gid, f"{path}.supplementalGroups[{i}]")
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):
        errs.append(invalid(f"{path}.shareProcessNamespace", True,
                            "ShareProcessNamespace and HostPID cannot both be enabled"))
    names: set[str] = set()
    for i, sysctl in enumerate(context.get("sysctls") or []):
        at, name = f"{path}.sysctls[{i}].name", sysctl.get("name") or ""
        if not name:
            errs.append(required(at))
        elif len(name) > 253 or not _SYSCTL.fullmatch(name):
            errs.append(invalid(at, name, f"must have at most 253 characters and match regex {_SYSCTL_SHOWN}"))
        elif name in names:
            errs.append(duplicate(at, name))
        errs += _host_sysctl(name, spec, at)
        names.add(name)
    if (policy := context.get("fsGroupChangePolicy")) is not None and policy not in ("Always", "OnRootMismatch"):
        errs.append(not_supported(f"{path}.fsGroupChangePolicy", policy, ["Always", "OnRootMismatch"]))
    return errs + seccomp_profile_errors(context.get("seccompProfile"), f"{path}.seccompProfile")


def _host_sysctl(name: str, spec: dict[str, Any], path: str) -> list[FieldError]:
    """`ValidateHostSysctl`: no namespaced sysctl of a namespace the pod shares with its host."""
    dotted = name.replace("/", ".")
    if spec.get("hostNetwork") and dotted.startswith("net."):
        return [invalid(path, name, "may not be specified when 'hostNetwork' is true")]
    if spec.get("hostIPC") and (dotted == "kernel.sem" or dotted.startswith(("kernel.shm", "kernel.msg",
                                                                             "fs.mqueue."))):
        return [invalid(path, name, "may not be specified when 'hostIPC' is true")]
    return []


def validate_host_aliases(aliases: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, alias in enumerate(aliases):
        errs += ip_address(alias.get("ip") or "", f"{path}[{i}].ip")
        for j, hostname in enumerate(alias.get("hostnames") or []):
            errs += dns_subdomain(hostname, f"{path}[{i}].hostnames[{j}]")
    return errs


def validate_readiness_gates(gates: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, gate in enumerate(gates):
        errs += qualified_name(gate.get("conditionType") or "", f"{path}[{i}].conditionType")
    return errs


def validate_scheduling_gates(gates: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        name = gate.get("name") or ""
        errs += qualified_name(name, f"{path}[{i}]")
        if name in seen:
            errs.append(duplicate(f"{path}[{i}]", name))
        seen.add(name)
    return errs
