"""`networking/v1` `Ingress`: HTTP routes into the cluster's Services (Kubernetes' `pkg/registry/networking/ingress`).

- No defaults in v1 (a path's `pathType` is required, not defaulted).
- Validation (`ValidateIngressCreate`, `ValidateIngressSpec`): the name is
  a DNS subdomain; `defaultBackend` or `rules` ("either `defaultBackend` or
  `rules` must be specified"); a rule's `host` is a DNS name, not an IP, a
  `*.` wildcard only as the first label; `http.paths` required; each path
  has a `pathType` ("pathType must be specified"): Exact and Prefix paths
  are absolute ("must be an absolute path") without `//`, `/./`, `/../`,
  `%2f` nor a `/..` or `/.` end, ImplementationSpecific ones absolute when
  set; a backend is a service xor a resource, a service has a name (a DNS
  label) and a port name (an IANA service name) xor number; TLS hosts are
  (wildcard) DNS subdomains and a `secretName` a DNS subdomain;
  `ingressClassName` a DNS subdomain, equal to the
  `kubernetes.io/ingress.class` annotation when both are set (create only);
  a create with that annotation is warned it is deprecated.
- Admission (DefaultIngressClass): an Ingress created without a class
  (nor the class annotation) gets the default IngressClass, when there is one.
- Strategy: a create starts with an empty status and generation 1; a spec
  change counts generation; `status` subresource (load balancer ingress IPs
  and hostnames checked); a PUT of a missing Ingress is 404.
- `kubectl get`: NAME CLASS HOSTS ADDRESS PORTS AGE (printIngress: up to
  three hosts then `+ N more...`, `*` for none; addresses sorted; PORTS
  `80` or `80, 443` with TLS).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, not_supported, required
from runtime.machinery.validation.gofmt import GoText
from runtime.machinery.validation.names import dns1035_label_errors
from runtime.models.k8s.networking_v1 import IngressClass
from runtime.server.kinds.base import AdmissionRequest, PolicyContext
from runtime.server.kinds.cluster.ingressclass import IngressClassStrategy
from runtime.server.kinds.cluster.netrules import (
    backend_reference_errors, is_ip, port_name_errors, port_number_errors, wildcard_subdomain_errors,
)
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.cluster.volumes import subdomain_errors
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.subresources import StatusSubresource

__all__ = ["IngressStrategy", "INGRESS_CLASS_ANNOTATION"]

#: The annotation that named an Ingress's class before `ingressClassName`.
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
_BAD_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_BAD_SUFFIXES = ("/..", "/.")


def _backend_errors(backend: dict[str, Any], path: str) -> list[FieldError]:
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return backend_reference_errors(resource, f"{path}.resource")
    if service is None:
        return [invalid(path, "", "resource or service backend is required")]
    errs: list[FieldError] = []
    name = service.get("name") or ""
    if not name:
        errs.append(required(f"{path}.service.name"))
    else:
        errs += [invalid(f"{path}.service.name", name, msg) for msg in dns1035_label_errors(name)]
    port = service.get("port") or {}
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs += [invalid(f"{path}.service.port.name", port_name, msg) for msg in port_name_errors(port_name)]
    elif number:
        errs += [invalid(f"{path}.service.port.number", number, msg) for msg in port_number_errors(number)]
    else:
        errs.append(required(path, "port name or number is required"))
    return errs


def _path_errors(item: dict[str, Any], at: str) -> list[FieldError]:
    kind = item.get("pathType")
    if kind is None:
        return [required(f"{at}.pathType", "pathType must be specified")]
    value = item.get("path") or ""
    errs: list[FieldError] = []
    if kind in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(f"{at}.path", value, "must be an absolute path"))
        errs += [invalid(f"{at}.path", value, f"must not contain '{seq}'") for seq in _BAD_SEQUENCES if seq in value]
        errs += [invalid(f"{at}.path", value, f"cannot end with '{end}'") for end in _BAD_SUFFIXES
                 if value.endswith(end)]
    elif kind == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(f"{at}.path", value, "must be an absolute path"))
    else:
        errs.append(not_supported(f"{at}.pathType", kind, _PATH_TYPES))
    return errs + _backend_errors(item.get("backend") or {}, f"{at}.backend")


def _host_errors(host: str) -> list[str]:
    return wildcard_subdomain_errors(host) if "*" in host else subdomain_errors(host)


def _rule_errors(rules: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(rules):
        at = f"spec.rules[{i}]"
        host = rule.get("host") or ""
        if host:
            if is_ip(host):
                errs.append(invalid(f"{at}.host", host, "must be a DNS name, not an IP address"))
            errs += [invalid(f"{at}.host", host, msg) for msg in _host_errors(host)]
        http = rule.get("http")
        if http is not None:
            paths = http.get("paths") or []
            if not paths:
                errs.append(required(f"{at}.http.paths"))
            for j, item in enumerate(paths):
                errs += _path_errors(item, f"{at}.http.paths[{j}]")
    return errs


def _tls_errors(tls: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, item in enumerate(tls):
        for j, host in enumerate(item.get("hosts") or []):
            errs += [invalid(f"spec.tls[{i}].hosts[{j}]", host, msg) for msg in _host_errors(host)]
        secret = item.get("secretName") or ""
        if secret:
            errs += [invalid(f"spec.tls[{i}].secretName", secret, msg) for msg in subdomain_errors(secret)]
    return errs


def _status_errors(obj: dict[str, Any]) -> list[FieldError]:
    """`ValidateIngressLoadBalancerStatus`."""
    errs: list[FieldError] = []
    entries = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    for i, entry in enumerate(entries):
        at = f"status.loadBalancer.ingress[{i}]"
        ip, hostname = entry.get("ip") or "", entry.get("hostname") or ""
        if ip and not is_ip(ip):
            errs.append(invalid(f"{at}.ip", ip, "must be a valid IP address"))
        if hostname:
            errs += [invalid(f"{at}.hostname", hostname, msg) for msg in subdomain_errors(hostname)]
            if is_ip(hostname):
                errs.append(invalid(f"{at}.hostname", hostname, "must be a DNS name, not an IP address"))
    return errs


def _hosts_text(rules: list[dict[str, Any]]) -> str:
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    return ",".join(hosts) + (f" + {len(rules) - 3} more..." if more else "")


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec = obj["metadata"], obj.get("spec") or {}
    entries = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    addresses = sorted({e.get("ip") or e.get("hostname") for e in entries if e.get("ip") or e.get("hostname")})
    class_name = spec.get("ingressClassName")
    return [meta.get("name", ""), "<none>" if class_name is None else class_name,
            _hosts_text(spec.get("rules") or []), ",".join(addresses), "80, 443" if spec.get("tls") else "80",
            age(meta.get("creationTimestamp"))]


_COLUMNS = Columns((
    NAME_COLUMN,
    column("Class", "The name of the IngressClass resource that should be used for additional configuration"),
    column("Hosts", "Hosts ports are exposed on"),
    column("Address", "Address is a list containing ingress points for the load-balancer"),
    column("Ports", "Ports of TLS configurations that open"),
    AGE_COLUMN,
), _cells)


class IngressStrategy(ClusterStrategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    counts_generation = True
    subresources = {"status": StatusSubresource()}
    initial_status: dict[str, Any] = {}
    columns = _COLUMNS

    async def admit(self, policy: PolicyContext, request: AdmissionRequest) -> None:
        """Kubernetes' DefaultIngressClass admission (creates only)."""
        obj = request.obj
        spec = obj.setdefault("spec", {})
        if (request.operation != "create" or spec.get("ingressClassName") is not None
                or INGRESS_CLASS_ANNOTATION in (obj["metadata"].get("annotations") or {})):
            return
        classes = self.scheme.by_model(IngressClass)
        if classes is not None and isinstance(classes.strategy, IngressClassStrategy):
            name = classes.strategy.default_class()
            if name is not None:
                spec["ingressClassName"] = name

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        if old is None and INGRESS_CLASS_ANNOTATION in (new["metadata"].get("annotations") or {}):
            return [f'annotation "{INGRESS_CLASS_ANNOTATION}" is deprecated, please use \'spec.ingressClassName\' '
                    "instead"]
        return []

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        rules = spec.get("rules") or []
        if not rules and spec.get("defaultBackend") is None:
            errs.append(invalid("spec", GoText("[]networking.IngressRule(nil)") if spec.get("rules") is None
                                else GoText("[]networking.IngressRule{}"),
                                "either `defaultBackend` or `rules` must be specified"))
        if spec.get("defaultBackend") is not None:
            errs += _backend_errors(spec["defaultBackend"], "spec.defaultBackend")
        errs += _rule_errors(rules) + _tls_errors(spec.get("tls") or [])
        class_name = spec.get("ingressClassName")
        if class_name is not None:
            errs += [invalid("spec.ingressClassName", class_name, msg) for msg in subdomain_errors(class_name)]
        return errs + _status_errors(obj)

    def validate(self, obj: dict[str, Any]) -> list[FieldError]:
        errs = super().validate(obj)
        annotation = (obj["metadata"].get("annotations") or {}).get(INGRESS_CLASS_ANNOTATION)
        class_name = (obj.get("spec") or {}).get("ingressClassName")
        if annotation is not None and class_name is not None and annotation != class_name:
            errs.append(invalid(f"annotations.{INGRESS_CLASS_ANNOTATION}", annotation,
                                "must match `ingressClassName` when both are specified"))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        # ValidateIngressUpdate: the create's rules without the class annotation check.
        return super().validate(new)
