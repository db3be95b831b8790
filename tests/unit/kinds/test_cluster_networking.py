"""Ingress, IngressClass and NetworkPolicy rules (Kubernetes v1.28's pkg/apis/networking: SetDefaults_NetworkPolicy,
SetDefaults_IngressClass, ValidateIngressCreate/Update, ValidateIngressClass(Update), ValidateNetworkPolicy, their
strategies and printers), on the strategies."""

from __future__ import annotations

import copy
from typing import Any

import trio

from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.models.catalog import INGRESS, INGRESS_CLASS, NETWORK_POLICY
from runtime.server.kinds.base import AdmissionRequest
from runtime.server.rbac.user import UserInfo

SCHEME = Scheme("k8s.io")
ING = next(t for t in SCHEME.types if t.info is INGRESS)
CLS = next(t for t in SCHEME.types if t.info is INGRESS_CLASS)
NP = next(t for t in SCHEME.types if t.info is NETWORK_POLICY)
SERVICE = {"service": {"name": "web", "port": {"number": 80}}}


def created(rt: Any, obj: dict[str, Any]) -> dict[str, Any]:
    decoded = rt.strategy.decode(Body(obj), "Strict")[0]
    rt.strategy.default(decoded)
    decoded["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    rt.strategy.prepare_for_create(decoded)
    return decoded


def ingress(meta: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return created(ING, {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                         "metadata": {"name": "i", "namespace": "d", **(meta or {})}, "spec": spec})


def path_rule(*paths: dict[str, Any], host: str | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"http": {"paths": list(paths)}}
    if host is not None:
        rule["host"] = host
    return rule


def ingress_class(**spec: Any) -> dict[str, Any]:
    return created(CLS, {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
                         "spec": {"controller": "example.com/ingress", **spec}})


def policy(**spec: Any) -> dict[str, Any]:
    return created(NP, {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                        "metadata": {"name": "p", "namespace": "d"}, "spec": spec})


def errors_of(rt: Any, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate(obj)]


# ---- Ingress ------------------------------------------------------------------------------------------

def test_ingress_needs_a_default_backend_or_rules():
    assert errors_of(ING, ingress()) == [
        "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"]
    assert errors_of(ING, ingress(defaultBackend=SERVICE)) == []


def test_ingress_path_type_is_required_in_v1():
    obj = ingress(rules=[path_rule({"path": "/", "backend": SERVICE})])
    assert "pathType" not in obj["spec"]["rules"][0]["http"]["paths"][0]
    assert errors_of(ING, obj) == [
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]


def test_ingress_exact_and_prefix_paths_must_be_absolute():
    obj = ingress(rules=[path_rule({"path": "api", "pathType": "Prefix", "backend": SERVICE})])
    assert errors_of(ING, obj) == ['spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path']


def test_ingress_paths_may_not_hold_dot_segments_or_double_slashes():
    obj = ingress(rules=[path_rule({"path": "/a//b/..", "pathType": "Exact", "backend": SERVICE})])
    assert errors_of(ING, obj) == [
        "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b/..\": must not contain '//'",
        "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b/..\": cannot end with '/..'"]


def test_ingress_implementation_specific_paths_are_free_but_absolute_when_set():
    ok = ingress(rules=[path_rule({"pathType": "ImplementationSpecific", "backend": SERVICE})])
    assert errors_of(ING, ok) == []
    bad = ingress(rules=[path_rule({"path": "x", "pathType": "ImplementationSpecific", "backend": SERVICE})])
    assert errors_of(ING, bad) == ['spec.rules[0].http.paths[0].path: Invalid value: "x": must be an absolute path']


def test_ingress_path_type_values():
    obj = ingress(rules=[path_rule({"path": "/", "pathType": "Regex", "backend": SERVICE})])
    assert errors_of(ING, obj) == [
        'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", '
        '"ImplementationSpecific", "Prefix"']


def test_ingress_backend_is_a_service_xor_a_resource():
    both = {**SERVICE, "resource": {"kind": "Bucket", "name": "b"}}
    assert errors_of(ING, ingress(defaultBackend=both)) == [
        'spec.defaultBackend: Invalid value: "": cannot set both resource and service backends']
    assert errors_of(ING, ingress(defaultBackend={})) == [
        'spec.defaultBackend: Invalid value: "": resource or service backend is required']
    assert errors_of(ING, ingress(defaultBackend={"resource": {"apiGroup": "example.com", "kind": "Bucket",
                                                               "name": "b"}})) == []


def test_ingress_service_port_is_a_name_xor_a_number():
    both = {"service": {"name": "web", "port": {"name": "http", "number": 80}}}
    assert errors_of(ING, ingress(defaultBackend=both)) == [
        'spec.defaultBackend: Invalid value: "": cannot set both port name & port number']
    neither = {"service": {"name": "web"}}
    assert errors_of(ING, ingress(defaultBackend=neither)) == [
        "spec.defaultBackend: Required value: port name or number is required"]
    bad_name = {"service": {"name": "web", "port": {"name": "HTTP"}}}
    assert errors_of(ING, ingress(defaultBackend=bad_name)) == [
        'spec.defaultBackend.service.port.name: Invalid value: "HTTP": must contain only alpha-numeric characters '
        "(a-z, 0-9), and hyphens (-)",
        'spec.defaultBackend.service.port.name: Invalid value: "HTTP": must contain at least one letter (a-z)']


def test_ingress_service_name_is_required_and_a_dns_label():
    assert errors_of(ING, ingress(defaultBackend={"service": {"port": {"number": 80}}})) == [
        "spec.defaultBackend.service.name: Required value"]


def test_ingress_host_is_a_dns_name_with_a_leading_wildcard_only():
    rule = path_rule({"path": "/", "pathType": "Prefix", "backend": SERVICE}, host="10.0.0.1")
    assert errors_of(ING, ingress(rules=[rule])) == [
        'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']
    assert errors_of(ING, ingress(rules=[{**rule, "host": "*.example.com"}])) == []
    errs = errors_of(ING, ingress(rules=[{**rule, "host": "a.*.example.com"}]))
    assert errs == ['spec.rules[0].host: Invalid value: "a.*.example.com": a wildcard DNS-1123 subdomain must start '
                    "with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric "
                    "characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used "
                    "for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]


def test_ingress_tls_hosts_and_secret_names_are_dns_subdomains():
    obj = ingress(defaultBackend=SERVICE, tls=[{"hosts": ["*.example.com", "Bad_Host"], "secretName": "Tls"}])
    assert [e.split(":")[0] for e in errors_of(ING, obj)] == ["spec.tls[0].hosts[1]", "spec.tls[0].secretName"]


def test_ingress_class_annotation_must_match_the_class_name_on_create():
    obj = ingress(meta={"annotations": {"kubernetes.io/ingress.class": "a"}}, defaultBackend=SERVICE,
                  ingressClassName="b")
    assert errors_of(ING, obj) == [
        'annotations.kubernetes.io/ingress.class: Invalid value: "a": must match `ingressClassName` when both are '
        "specified"]
    assert [str(e) for e in ING.strategy.validate_update(obj, copy.deepcopy(obj))] == []


def test_ingress_counts_generation_and_starts_with_an_empty_status():
    assert (ING.strategy.counts_generation, ING.strategy.status_subresource) == (True, True)
    obj = created(ING, {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                        "metadata": {"name": "i", "namespace": "d"}, "spec": {"defaultBackend": SERVICE},
                        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}})
    assert "status" not in obj


def test_ingress_status_load_balancer_addresses_are_checked():
    obj = ingress(defaultBackend=SERVICE)
    obj["status"] = {"loadBalancer": {"ingress": [{"ip": "not-ip"}, {"hostname": "1.2.3.4"}]}}
    assert errors_of(ING, obj) == [
        'status.loadBalancer.ingress[0].ip: Invalid value: "not-ip": must be a valid IP address',
        'status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address']


def test_ingress_printer_columns_and_cells():
    assert [c["name"] for c in ING.strategy.columns.definitions] == ["Name", "Class", "Hosts", "Address", "Ports",
                                                                    "Age"]
    hosts = [path_rule({"path": "/", "pathType": "Prefix", "backend": SERVICE}, host=f"h{i}.example.com")
             for i in range(5)]
    obj = ingress(rules=hosts, tls=[{"hosts": ["h0.example.com"]}], ingressClassName="nginx")
    obj["status"] = {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"},
                                                  {"ip": "10.0.0.1"}]}}
    assert ING.strategy.columns.cells(obj)[1:5] == [
        "nginx", "h0.example.com,h1.example.com,h2.example.com + 2 more...", "10.0.0.1,10.0.0.2,lb.example.com",
        "80, 443"]
    assert ING.strategy.columns.cells(ingress(defaultBackend=SERVICE))[1:5] == ["<none>", "*", "", "80"]


# ---- IngressClass -------------------------------------------------------------------------------------

def test_ingress_class_controller_is_required_and_domain_prefixed():
    assert errors_of(CLS, ingress_class(controller="")) == ["spec.controller: Required value"]
    assert errors_of(CLS, ingress_class(controller="nginx")) == [
        'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")']


def test_ingress_class_controller_is_immutable():
    old = ingress_class()
    new = ingress_class(controller="example.com/other")
    assert [str(e) for e in CLS.strategy.validate_update(new, old)] == [
        'spec.controller: Invalid value: "example.com/other": field is immutable']


def test_ingress_class_parameters_scope_defaults_to_cluster():
    obj = ingress_class(parameters={"kind": "Config", "name": "c"})
    assert obj["spec"]["parameters"]["scope"] == "Cluster"
    assert errors_of(CLS, obj) == []


def test_ingress_class_parameters_scope_rules():
    assert errors_of(CLS, ingress_class(parameters={"kind": "Config", "name": "c", "scope": "Namespace"})) == [
        "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]
    assert errors_of(CLS, ingress_class(parameters={"kind": "Config", "name": "c", "namespace": "x"})) == [
        "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"]
    assert errors_of(CLS, ingress_class(parameters={"name": "c", "scope": "World"})) == [
        "spec.parameters.kind: Required value: kind is required",
        'spec.parameters.scope: Unsupported value: "World": supported values: "Cluster", "Namespace"']


def test_ingress_class_printer_shows_the_parameters_reference():
    assert [c["name"] for c in CLS.strategy.columns.definitions] == ["Name", "Controller", "Parameters", "Age"]
    obj = ingress_class(parameters={"apiGroup": "example.com", "kind": "Config", "name": "c"})
    assert CLS.strategy.columns.cells(obj)[1:3] == ["example.com/ingress", "Config.example.com/c"]
    assert CLS.strategy.columns.cells(ingress_class())[2] == "<none>"


# ---- NetworkPolicy ------------------------------------------------------------------------------------

def test_network_policy_types_default_from_egress_presence():
    assert policy(podSelector={})["spec"]["policyTypes"] == ["Ingress"]
    assert policy(podSelector={}, egress=[{}])["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy(podSelector={}, policyTypes=["Egress"])["spec"]["policyTypes"] == ["Egress"]


def test_network_policy_ports_default_to_tcp():
    obj = policy(podSelector={}, ingress=[{"ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}])
    assert [p["protocol"] for p in obj["spec"]["ingress"][0]["ports"]] == ["TCP", "UDP"]


def test_network_policy_peer_is_ip_block_xor_selectors():
    obj = policy(podSelector={}, ingress=[{"from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}},
                                                    {"podSelector": {}, "namespaceSelector": {}}]}])
    assert errors_of(NP, obj) == ["spec.ingress[0].from[0]: Required value: must specify a peer",
                                  "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer"]


def test_network_policy_ip_block_cidr_and_except_within():
    obj = policy(podSelector={}, egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.0/8",
                                                             "except": ["10.1.0.0/16", "11.0.0.0/16", "10.0.0.0/8"]}},
                                                {"ipBlock": {"cidr": "10.0.0.0/40"}}, {"ipBlock": {"cidr": ""}}]}])
    assert errors_of(NP, obj) == [
        'spec.egress[0].to[0].ipBlock.except[1]: Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`',
        'spec.egress[0].to[0].ipBlock.except[2]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`',
        'spec.egress[0].to[1].ipBlock.cidr: Invalid value: "10.0.0.0/40": not a valid CIDR',
        "spec.egress[0].to[2].ipBlock.cidr: Required value"]


def test_network_policy_port_rules():
    ports = [{"port": 0}, {"port": 80, "endPort": 70}, {"port": "http", "endPort": 90}, {"endPort": 90},
             {"protocol": "ICMP"}]
    errs = errors_of(NP, policy(podSelector={}, ingress=[{"ports": ports}]))
    assert errs == [
        "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        "spec.ingress[0].ports[1].endPort: Invalid value: 80: must be greater than or equal to `port`",
        "spec.ingress[0].ports[2].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
        "spec.ingress[0].ports[3].endPort: Invalid value: 90: may not be specified when `port` is not specified",
        'spec.ingress[0].ports[4].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"']


def test_network_policy_types_are_ingress_or_egress_at_most_two():
    assert errors_of(NP, policy(podSelector={}, policyTypes=["Sideways"])) == [
        'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"']
    assert errors_of(NP, policy(podSelector={}, policyTypes=["Ingress", "Egress", "Ingress"])) == [
        'spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify '
        "more than two policyTypes"]


def test_network_policy_pod_selector_is_a_label_selector():
    errs = errors_of(NP, policy(podSelector={"matchLabels": {"a b": "c"}}))
    assert errs and all(e.startswith("spec.podSelector.matchLabels") for e in errs)


def test_network_policy_counts_generation():
    assert NP.strategy.counts_generation is True


def test_network_policy_printer_formats_the_pod_selector():
    assert [c["name"] for c in NP.strategy.columns.definitions] == ["Name", "Pod-Selector", "Age"]
    obj = policy(podSelector={"matchLabels": {"app": "web"},
                              "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]})
    assert NP.strategy.columns.cells(obj)[1] == "app=web,tier in (a,b)"
    assert NP.strategy.columns.cells(policy(podSelector={}))[1] == "<none>"


async def _admitted(scheme: Scheme, obj: dict[str, Any]) -> dict[str, Any]:
    rt = next(t for t in scheme.types if t.info is INGRESS)
    request = AdmissionRequest(UserInfo("u"), rt, "create", obj, None, False)
    await rt.strategy.admit(None, request)  # type: ignore[arg-type]
    return request.obj


def test_ingress_without_a_class_gets_the_newest_default_ingress_class():
    scheme = Scheme("k8s.io")
    classes = next(t for t in scheme.types if t.info is INGRESS_CLASS).strategy
    default = {"ingressclass.kubernetes.io/is-default-class": "true"}
    classes.observe_list([
        {"metadata": {"name": "b", "annotations": default, "creationTimestamp": "2026-01-02T00:00:00Z"}},
        {"metadata": {"name": "a", "annotations": default, "creationTimestamp": "2026-01-02T00:00:00Z"}},
        {"metadata": {"name": "old", "annotations": default, "creationTimestamp": "2026-01-01T00:00:00Z"}}])
    assert trio.run(_admitted, scheme, ingress(defaultBackend=SERVICE))["spec"]["ingressClassName"] == "a"
    annotated = ingress(meta={"annotations": {"kubernetes.io/ingress.class": "x"}}, defaultBackend=SERVICE)
    assert "ingressClassName" not in trio.run(_admitted, scheme, annotated)["spec"]
    classes.observe("DELETED", {"metadata": {"name": "a"}})
    assert trio.run(_admitted, scheme, ingress(defaultBackend=SERVICE))["spec"]["ingressClassName"] == "b"


def test_the_ingress_class_annotation_is_warned_deprecated_on_create():
    obj = ingress(meta={"annotations": {"kubernetes.io/ingress.class": "nginx"}}, defaultBackend=SERVICE)
    assert ING.strategy.warnings(None, obj, "m") == [
        "annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' instead"]
    assert ING.strategy.warnings(obj, obj, "m") == []
