"""`networking/v1` `NetworkPolicy`: which traffic pods may send and receive (Kubernetes'
`pkg/registry/networking/networkpolicy`).

- Defaults (`SetDefaults_NetworkPolicy`, `..Port`): `policyTypes` is
  `[Ingress]`, plus Egress when there are egress rules; a port's
  `protocol` is TCP.
- Validation (`ValidateNetworkPolicy`): the name is a DNS subdomain;
  `podSelector` a label selector; each port's protocol TCP, UDP or SCTP, a
  number in 1-65535 or an IANA name, `endPort` only with a numeric port and
  not below it; each peer exactly one of ipBlock or the selectors ("must
  specify a peer", "may not specify both ipBlock and another peer"); an
  ipBlock's `cidr` required and a CIDR, each `except` a CIDR strictly
  inside it; at most two `policyTypes`, each Ingress or Egress.
- Generation 1 on create, counted on spec changes; a PUT of a missing policy is 404.
- `kubectl get`: NAME POD-SELECTOR AGE (printNetworkPolicy: the selector
  as `metav1.FormatLabelSelector` writes it, `<none>` when empty).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError, label_selector_errors
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required
from runtime.machinery.validation.gofmt import GoText, go_quote
from runtime.models.k8s.networking_v1 import NetworkPolicySpec
from runtime.server.kinds.cluster.netrules import parse_cidr, port_name_errors, port_number_errors
from runtime.server.kinds.columns import doc_column
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age

__all__ = ["NetworkPolicyStrategy", "format_label_selector"]

_PROTOCOLS = ["TCP", "UDP", "SCTP"]
_POLICY_TYPES = ["Ingress", "Egress"]


def _port_errors(port: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in _PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, _PROTOCOLS))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            errs.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is not specified"))
    elif isinstance(number, int):
        errs += [invalid(f"{path}.port", number, msg) for msg in port_number_errors(number)]
        if end is not None:
            if end < number:
                errs.append(invalid(f"{path}.endPort", number, "must be greater than or equal to `port`"))
            errs += [invalid(f"{path}.endPort", end, msg) for msg in port_number_errors(end)]
    else:
        if end is not None:
            errs.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is non-numeric"))
        errs += [invalid(f"{path}.port", number, msg) for msg in port_name_errors(number)]
    return errs


def _ip_block_errors(block: dict[str, Any], path: str) -> list[FieldError]:
    cidr = block.get("cidr") or ""
    if not cidr:
        return [required(f"{path}.cidr")]
    network = parse_cidr(cidr)
    if network is None:
        return [invalid(f"{path}.cidr", cidr, "not a valid CIDR")]
    errs: list[FieldError] = []
    for i, text in enumerate(block.get("except") or []):
        at = f"{path}.except[{i}]"
        inner = parse_cidr(text)
        if inner is None:
            return errs + [invalid(at, text, "not a valid CIDR")]
        # Go's IPNet.Contains of the except's (masked) address; another family is never inside.
        if (inner.version != network.version or inner.network_address not in network
                or network.prefixlen >= inner.prefixlen):
            errs.append(invalid(at, text, "must be a strict subset of `cidr`"))
    return errs


def _peer_errors(peer: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    found = 0
    for field in ("podSelector", "namespaceSelector"):
        if peer.get(field) is not None:
            found += 1
            errs += label_selector_errors(peer[field], f"{path}.{field}")
    if peer.get("ipBlock") is not None:
        found += 1
        errs += _ip_block_errors(peer["ipBlock"], f"{path}.ipBlock")
    if not found:
        errs.append(required(path, "must specify a peer"))
    elif found > 1 and peer.get("ipBlock") is not None:
        errs.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def format_label_selector(selector: dict[str, Any] | None) -> str:
    """`metav1.FormatLabelSelector`: `a=b,c in (d,e)`; `<none>` for an empty selector."""
    if selector is None:
        return "<none>"
    parts = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), sorted(expr.get("values") or [])
        shown = {"In": f"{key} in ({','.join(values)})", "NotIn": f"{key} notin ({','.join(values)})",
                 "Exists": key, "DoesNotExist": f"!{key}"}.get(op)
        if shown is not None:
            parts.append((key, shown))
    text = ",".join(shown for _, shown in sorted(parts, key=lambda part: part[0]))  # by key, as labels.Selector
    return text or "<none>"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), format_label_selector((obj.get("spec") or {}).get("podSelector") or {}),
            age(meta.get("creationTimestamp"))]


_COLUMNS = Columns((NAME_COLUMN, doc_column("Pod-Selector", NetworkPolicySpec, "podSelector"), AGE_COLUMN), _cells)


class NetworkPolicyStrategy(ClusterStrategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    counts_generation = True
    columns = _COLUMNS

    def default(self, obj: dict[str, Any]) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("podSelector", {})
        for direction in ("ingress", "egress"):
            for rule in spec.get(direction) or []:
                for port in rule.get("ports") or []:
                    if port.get("protocol") is None:
                        port["protocol"] = "TCP"
        if not spec.get("policyTypes"):
            spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = label_selector_errors(spec.get("podSelector") or {}, "spec.podSelector")
        for direction, peers in (("ingress", "from"), ("egress", "to")):
            for i, rule in enumerate(spec.get(direction) or []):
                at = f"spec.{direction}[{i}]"
                for j, port in enumerate(rule.get("ports") or []):
                    errs += _port_errors(port, f"{at}.ports[{j}]")
                for j, peer in enumerate(rule.get(peers) or []):
                    errs += _peer_errors(peer, f"{at}.{peers}[{j}]")
        types = spec.get("policyTypes") or []
        if len(types) > 2:
            shown = GoText("[]networking.PolicyType{" + ", ".join(go_quote(t) for t in types) + "}")
            return errs + [invalid("spec.policyTypes", shown, "may not specify more than two policyTypes")]
        return errs + [not_supported(f"spec.policyTypes[{i}]", t, _POLICY_TYPES)
                       for i, t in enumerate(types) if t not in _POLICY_TYPES]
