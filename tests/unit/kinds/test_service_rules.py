"""Service rules on the strategy itself (Kubernetes' SetDefaults_Service, ValidateService, ValidateServiceUpdate,
the service storage's linked-field fix-ups, printService) and the ranges it allocates from, in kube's words."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from api.cli import parser, serve_options
from api.serveoptions import ServeOptions
from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from runtime.server.kinds.services import ServiceRanges
from runtime.server.kinds.services.service_defaults import (
    drop_type_dependent_fields, init_ip_families, normalize_cluster_ips, patch_allocated_values,
)

SCHEME = Scheme("k8s.io")
SVC = SCHEME.by_api_version_kind("v1", "Service")
PORT_MSG = "must be between 1 and 65535, inclusive"


def service(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "ci"}, "spec": spec}


def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    obj = SVC.strategy.decode(Body(obj), "Strict")[0]
    SVC.strategy.default(obj)
    return obj


def allocated(obj: dict[str, Any], ip: str = "10.96.0.10") -> dict[str, Any]:
    """As the registry's admission leaves a Service before validation: defaulted, its IP and families set."""
    obj = defaulted(obj)
    spec = obj["spec"]
    normalize_cluster_ips(spec)
    if spec["type"] != "ExternalName" and not spec.get("clusterIP"):
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
    init_ip_families(spec, "IPv4")
    return obj


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in SVC.strategy.validate(obj)]


def update_errors(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    return [str(e) for e in SVC.strategy.validate_update(new, old)]


PORT = {"port": 80}


# ---- defaults ------------------------------------------------------------------------------------------

def test_defaults_type_cluster_ip_affinity_none_protocol_tcp_target_port_and_internal_policy() -> None:
    spec = defaulted(service(ports=[{"port": 80}, {"name": "b", "port": 81, "targetPort": "http"}]))["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80},
                             {"name": "b", "port": 81, "protocol": "TCP", "targetPort": "http"}]
    assert spec["internalTrafficPolicy"] == "Cluster" and "externalTrafficPolicy" not in spec


def test_defaults_external_traffic_policy_for_node_port_and_load_balancer_only() -> None:
    assert defaulted(service(type="NodePort", ports=[PORT]))["spec"]["externalTrafficPolicy"] == "Cluster"
    lb = defaulted(service(type="LoadBalancer", ports=[PORT]))["spec"]
    assert lb["externalTrafficPolicy"] == "Cluster" and lb["allocateLoadBalancerNodePorts"] is True
    assert "allocateLoadBalancerNodePorts" not in defaulted(service(type="NodePort", ports=[PORT]))["spec"]
    assert "internalTrafficPolicy" not in defaulted(service(type="ExternalName", externalName="a.b"))["spec"]


def test_defaults_client_ip_affinity_timeout_and_drop_config_for_none() -> None:
    spec = defaulted(service(ports=[PORT], sessionAffinity="ClientIP"))["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    spec = defaulted(service(ports=[PORT], sessionAffinityConfig={"clientIP": {"timeoutSeconds": 5}}))["spec"]
    assert "sessionAffinityConfig" not in spec


def test_defaulting_twice_equals_once() -> None:
    once = defaulted(service(type="LoadBalancer", ports=[PORT], sessionAffinity="ClientIP"))
    twice = copy.deepcopy(once)
    SVC.strategy.default(twice)
    assert twice == once


def test_cluster_ips_follow_cluster_ip_and_the_reverse() -> None:
    spec: dict[str, Any] = {"clusterIP": "10.96.0.5"}
    normalize_cluster_ips(spec)
    assert spec["clusterIPs"] == ["10.96.0.5"]
    spec = {"clusterIPs": ["10.96.0.6"]}
    normalize_cluster_ips(spec)
    assert spec["clusterIP"] == "10.96.0.6"


def test_ip_families_single_stack_and_headless_without_selector_require_dual_stack() -> None:
    spec: dict[str, Any] = {"type": "ClusterIP", "clusterIP": "10.96.0.5", "clusterIPs": ["10.96.0.5"]}
    assert init_ip_families(spec, "IPv4") == []
    assert (spec["ipFamilies"], spec["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    headless: dict[str, Any] = {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}
    init_ip_families(headless, "IPv4")
    assert (headless["ipFamilies"], headless["ipFamilyPolicy"]) == (["IPv4"], "RequireDualStack")


def test_ip_families_the_cluster_does_not_serve_are_refused() -> None:
    errs = init_ip_families({"type": "ClusterIP", "ipFamilies": ["IPv6"]}, "IPv4")
    assert [str(e) for e in errs] == ['spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster']
    errs = init_ip_families({"type": "ClusterIP", "ipFamilyPolicy": "RequireDualStack"}, "IPv4")
    assert [str(e) for e in errs] == ['spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not '
                                      'configured for dual-stack services']


def test_an_update_without_the_allocated_values_keeps_them() -> None:
    old = {"type": "NodePort", "clusterIP": "10.96.0.5", "clusterIPs": ["10.96.0.5"],
           "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}]}
    new: dict[str, Any] = {"type": "NodePort", "ports": [{"port": 80, "protocol": "TCP"}]}
    patch_allocated_values(new, old)
    assert new["clusterIP"] == "10.96.0.5" and new["ports"][0]["nodePort"] == 30080


def test_a_type_change_drops_what_the_new_type_does_not_use() -> None:
    old = {"type": "NodePort", "clusterIP": "10.96.0.5", "clusterIPs": ["10.96.0.5"],
           "externalTrafficPolicy": "Cluster", "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}]}
    new = copy.deepcopy(old)
    new["type"] = "ClusterIP"
    drop_type_dependent_fields(new, old)
    assert "nodePort" not in new["ports"][0] and "externalTrafficPolicy" not in new
    to_name = dict(copy.deepcopy(old), type="ExternalName", externalName="db.example.com")
    drop_type_dependent_fields(to_name, old)
    assert "clusterIP" not in to_name and "clusterIPs" not in to_name


# ---- validation ----------------------------------------------------------------------------------------

def test_a_complete_service_is_valid() -> None:
    assert errors_of(allocated(service(selector={"app": "web"}, ports=[PORT]))) == []


def test_names_are_dns_1035_labels() -> None:
    errs = errors_of(allocated(service("1web", ports=[PORT])))
    assert errs == ['metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric '
                    "characters or '-', start with an alphabetic character, and end with an alphanumeric character "
                    "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]


def test_ports_are_required_unless_headless_or_external_name() -> None:
    assert errors_of(allocated(service())) == ["spec.ports: Required value"]
    assert errors_of(allocated(service(clusterIP="None", selector={"a": "b"}))) == []
    assert errors_of(allocated(service(type="ExternalName", externalName="db.example.com"))) == []


def test_port_numbers_are_in_range() -> None:
    errs = errors_of(allocated(service(ports=[{"port": 70000}])))
    assert f"spec.ports[0].port: Invalid value: 70000: {PORT_MSG}" in errs
    assert f"spec.ports[0].targetPort: Invalid value: 70000: {PORT_MSG}" in errs


def test_port_names_are_required_with_several_ports_and_unique() -> None:
    errs = errors_of(allocated(service(ports=[{"port": 80}, {"port": 81}])))
    assert errs == ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"]
    errs = errors_of(allocated(service(ports=[{"name": "a", "port": 80}, {"name": "a", "port": 81}])))
    assert errs == ['spec.ports[1].name: Duplicate value: "a"']


def test_port_protocols_are_tcp_udp_or_sctp() -> None:
    errs = errors_of(allocated(service(ports=[{"port": 80, "protocol": "HTTP"}])))
    assert errs == ['spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"']


def test_two_ports_alike_in_protocol_and_port_are_duplicates() -> None:
    errs = errors_of(allocated(service(ports=[{"name": "a", "port": 80}, {"name": "b", "port": 80}])))
    assert errs == ['spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", '
                    'AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, '
                    'StrVal:""}, NodePort:0}']
    assert errors_of(allocated(service(ports=[{"name": "a", "port": 53}, {"name": "b", "port": 53,
                                                                          "protocol": "UDP"}]))) == []


def test_selector_labels_are_checked() -> None:
    errs = errors_of(allocated(service(ports=[PORT], selector={"app": "a b"})))
    assert len(errs) == 1 and errs[0].startswith('spec.selector: Invalid value: "a b": a valid label must be')


def test_type_values_are_kubes() -> None:
    errs = errors_of(allocated(service(type="Internal", ports=[PORT])))
    assert 'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", ' \
           '"LoadBalancer", "NodePort"' in errs


def test_node_port_and_load_balancer_services_are_never_headless() -> None:
    errs = errors_of(allocated(service(type="NodePort", clusterIP="None", ports=[PORT])))
    assert "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services" in errs


def test_external_name_needs_a_dns_name_and_no_cluster_ip() -> None:
    assert errors_of(allocated(service(type="ExternalName"))) == ["spec.externalName: Required value"]
    assert errors_of(allocated(service(type="ExternalName", externalName="db.example.com."))) == []
    errs = errors_of(allocated(service(type="ExternalName", externalName="db", clusterIP="10.96.0.9")))
    assert "spec.clusterIPs: Forbidden: may not be set for ExternalName services" in errs


def test_a_cluster_ip_service_has_no_node_port() -> None:
    errs = errors_of(allocated(service(ports=[{"port": 80, "nodePort": 30080}])))
    assert errs == ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]


def test_cluster_ips_are_ips_and_match_cluster_ip() -> None:
    obj = allocated(service(ports=[PORT], clusterIP="10.96.0.300"))
    assert "spec.clusterIPs[0]: Invalid value: \"10.96.0.300\": must be a valid IP address, (e.g. 10.9.8.7 or " \
           "2001:db8::ffff)" in errors_of(obj)
    obj = allocated(service(ports=[PORT]))
    obj["spec"]["clusterIPs"] = ["10.96.0.11"]
    assert errors_of(obj) == ['spec.clusterIPs: Invalid value: []string{"10.96.0.11"}: first value must match '
                              '`clusterIP`']


def test_session_affinity_config_only_with_client_ip_and_its_timeout_in_range() -> None:
    obj = allocated(service(ports=[PORT], sessionAffinity="ClientIP",
                            sessionAffinityConfig={"clientIP": {"timeoutSeconds": 90000}}))
    assert errors_of(obj) == ["spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 90000: must be "
                              "greater than 0 and less than 86400"]
    obj = allocated(service(ports=[PORT]))
    obj["spec"]["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 5}}
    assert errors_of(obj) == ["spec.sessionAffinityConfig: Forbidden: must not be set when session affinity is None"]


def test_external_ips_are_not_special() -> None:
    errs = errors_of(allocated(service(ports=[PORT], externalIPs=["127.0.0.1"])))
    assert errs == ['spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range '
                    "(127.0.0.0/8, ::1/128)"]


def test_load_balancer_source_ranges_only_for_load_balancers_and_cidrs() -> None:
    errs = errors_of(allocated(service(ports=[PORT], loadBalancerSourceRanges=["10.0.0.0/8"])))
    assert errs == ["spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"]
    errs = errors_of(allocated(service(type="LoadBalancer", ports=[{"port": 80, "nodePort": 30080}],
                                       loadBalancerSourceRanges=[" 10.0.0.0/8", "10.0.0.1"])))
    assert errs == ['spec.LoadBalancerSourceRanges[1]: Invalid value: "10.0.0.1": must be a CIDR']


def test_health_check_node_port_only_for_local_load_balancers() -> None:
    errs = errors_of(allocated(service(type="NodePort", ports=[{"port": 80, "nodePort": 30080}],
                                       healthCheckNodePort=30001)))
    assert errs == ["spec.healthCheckNodePort: Invalid value: 30001: may only be set when `type` is 'LoadBalancer' "
                    "and `externalTrafficPolicy` is 'Local'"]


def test_external_traffic_policy_only_for_externally_accessible_services() -> None:
    errs = errors_of(allocated(service(ports=[PORT], externalTrafficPolicy="Local")))
    assert errs == ['spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible '
                    'services']


# ---- update --------------------------------------------------------------------------------------------

def test_the_cluster_ip_may_not_change_once_set() -> None:
    old = allocated(service(ports=[PORT]), "10.96.0.10")
    new = copy.deepcopy(old)
    new["spec"]["clusterIP"], new["spec"]["clusterIPs"] = "10.96.0.11", ["10.96.0.11"]
    assert update_errors(new, old) == ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change '
                                       'once set']


def test_a_type_change_to_node_port_keeps_the_cluster_ip() -> None:
    old = allocated(service(ports=[PORT]), "10.96.0.10")
    new = copy.deepcopy(old)
    new["spec"].update(type="NodePort", externalTrafficPolicy="Cluster")
    new["spec"]["ports"][0]["nodePort"] = 30080
    assert update_errors(new, old) == []


def test_a_status_write_checks_the_load_balancer_ingress() -> None:
    obj = allocated(service(type="LoadBalancer", ports=[{"port": 80, "nodePort": 30080}]))
    obj["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3"}, {"hostname": "1.2.3.4"}]}}
    assert errors_of(obj) == [
        'status.loadBalancer.ingress[0].ip: Invalid value: "1.2.3": must be a valid IP address',
        'status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.4": must be a DNS name, not an IP address']


# ---- printer -------------------------------------------------------------------------------------------

def test_print_service_columns_and_cells() -> None:
    columns = SVC.strategy.columns
    assert [(c["name"], c["priority"]) for c in columns.definitions] == [
        ("Name", 0), ("Type", 0), ("Cluster-IP", 0), ("External-IP", 0), ("Port(s)", 0), ("Age", 0), ("Selector", 1)]
    obj = allocated(service(type="NodePort", selector={"b": "2", "a": "1"},
                            ports=[{"name": "h", "port": 80, "nodePort": 30080}, {"name": "d", "port": 53,
                                                                                  "protocol": "UDP"}]))
    cells = columns.cells(obj)
    assert cells[:5] == ["web", "NodePort", "10.96.0.10", "<none>", "80:30080/TCP,53/UDP"] and cells[6] == "a=1,b=2"


def test_print_service_external_ip_of_load_balancers_and_external_names() -> None:
    lb = allocated(service(type="LoadBalancer", ports=[PORT]))
    assert SVC.strategy.columns.cells(lb)[3] == "<pending>"
    lb["status"] = {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}, {"hostname": "lb.example.com"}]}}
    assert SVC.strategy.columns.cells(lb)[3] == "203.0.113.7,lb.example.com"
    name = allocated(service(type="ExternalName", externalName="db.example.com"))
    assert SVC.strategy.columns.cells(name)[2:5] == ["<none>", "db.example.com", "<none>"]


# ---- ranges --------------------------------------------------------------------------------------------

def test_ranges_default_to_kubes_and_refuse_bad_values() -> None:
    ranges = ServiceRanges.parse()
    assert (ranges.cidr, ranges.port_range) == ("10.96.0.0/12", "30000-32767")
    assert ServiceRanges.parse("10.0.0.0/24", "30000+100").port_range == "30000-30100"
    for cidr, ports in (("nope", "30000-32767"), ("10.0.0.0/8", "30000-32767"), ("10.0.0.0/24", "3-2")):
        with pytest.raises(ValueError):
            ServiceRanges.parse(cidr, ports)


def test_a_range_hands_out_neither_its_network_nor_its_broadcast_address() -> None:
    ranges = ServiceRanges.parse("10.0.0.0/29")
    assert [ranges.contains_ip(f"10.0.0.{i}") for i in range(8)] == [False] + [True] * 6 + [False]
    assert not ranges.contains_ip("10.0.1.1") and not ranges.contains_ip("fd00::1")


def test_the_serve_defaults_are_the_ranges_defaults() -> None:
    opts = ServeOptions()
    assert ServiceRanges.parse() == ServiceRanges.parse(opts.service_cluster_ip_range, opts.service_node_port_range)


def test_the_ip_family_may_not_change_once_set() -> None:
    old = allocated(service(ports=[PORT]), "10.96.0.10")
    new = copy.deepcopy(old)
    new["spec"]["ipFamilies"] = ["IPv6"]
    assert 'spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6"}: may not change once set' in \
        update_errors(new, old)


def test_the_primary_cluster_ip_can_not_be_unset() -> None:
    old = allocated(service(ports=[PORT]), "10.96.0.10")
    new = copy.deepcopy(old)
    new["spec"].pop("clusterIPs")
    new["spec"].pop("clusterIP")
    assert update_errors(new, old)[0] == ("spec.clusterIPs[0]: Invalid value: []string(nil): primary clusterIP can not "
                                          "be unset")


def test_a_headless_service_stays_headless_and_to_external_name_anything_goes() -> None:
    old = allocated(service(clusterIP="None", selector={"a": "b"}, ports=[PORT]))
    new = copy.deepcopy(old)
    new["spec"]["clusterIP"], new["spec"]["clusterIPs"] = "10.96.0.12", ["10.96.0.12"]
    assert update_errors(new, old) == ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.12"}: may not change '
                                       'once set']
    gone = allocated(service(type="ExternalName", externalName="db.example.com"))
    assert update_errors(gone, allocated(service(ports=[PORT]))) == []


def test_warnings_for_fields_the_type_ignores_and_uncanonical_ipv6() -> None:
    obj = allocated(service(ports=[PORT], externalName="db.example.com", externalIPs=["2001:DB8::1"]))
    assert SVC.strategy.warnings(None, obj, "test") == [
        'spec.externalName is ignored when spec.type is not "ExternalName"',
        'spec.externalIPs[0]: IPv6 address "2001:DB8::1" is not in RFC 5952 canonical format ("2001:db8::1"), '
        "which may cause controller apply-loops"]
    assert SVC.strategy.warnings(None, allocated(service(ports=[PORT])), "test") == []


def test_the_serve_flags_set_the_ranges_and_bad_ones_are_refused() -> None:
    opts = serve_options(parser().parse_args(["serve", "--store", "memory", "--service-cluster-ip-range",
                                              "10.0.0.0/24", "--service-node-port-range", "30000-30099"]))
    assert (opts.service_cluster_ip_range, opts.service_node_port_range) == ("10.0.0.0/24", "30000-30099")
    with pytest.raises(ValueError, match="--service-node-port-range: unable to parse port range: many"):
        serve_options(parser().parse_args(["serve", "--store", "memory", "--service-node-port-range", "many"]))
    with pytest.raises(ValueError, match="--service-cluster-ip-range: invalid CIDR"):
        serve_options(parser().parse_args(["serve", "--store", "memory", "--service-cluster-ip-range", "x/33"]))
