"""Endpoints and EndpointSlice rules on the strategies (Kubernetes' ValidateEndpoints, ValidateEndpointSlice and its
update, their defaults, printEndpoints and printEndpointSlice), in kube's words and field paths."""

from __future__ import annotations

import copy
from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme

SCHEME = Scheme("k8s.io")
EP = SCHEME.by_api_version_kind("v1", "Endpoints")
SLICE = SCHEME.by_api_version_kind("discovery.k8s.io/v1", "EndpointSlice")


def endpoints(*subsets: dict[str, Any]) -> dict[str, Any]:
    obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "namespace": "ci"},
           "subsets": list(subsets)}
    obj = EP.strategy.decode(Body(obj), "Strict")[0]
    EP.strategy.default(obj)
    return obj


def endpoint_slice(address_type: str = "IPv4", addresses: tuple[str, ...] = ("10.1.0.1",),
                   ports: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    obj = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
           "metadata": {"name": "web-x1", "namespace": "ci"}, "endpoints": [{"addresses": list(addresses)}],
           "ports": ports if ports is not None else [{"port": 80}], **fields}
    if address_type:
        obj["addressType"] = address_type
    obj = SLICE.strategy.decode(Body(obj), "Strict")[0]
    SLICE.strategy.default(obj)
    return obj


def errors_of(rt: Any, obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in rt.strategy.validate(obj)]


# ---- Endpoints -----------------------------------------------------------------------------------------

def test_endpoints_ports_default_to_tcp() -> None:
    obj = endpoints({"addresses": [{"ip": "10.1.0.1"}], "ports": [{"port": 80}]})
    assert obj["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    assert errors_of(EP, obj) == []


def test_a_subset_needs_addresses_or_not_ready_addresses() -> None:
    assert errors_of(EP, endpoints({"ports": [{"port": 80}]})) == [
        "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"]
    assert errors_of(EP, endpoints({"notReadyAddresses": [{"ip": "10.1.0.2"}]})) == []


def test_endpoint_addresses_are_ips_and_not_special() -> None:
    errs = errors_of(EP, endpoints({"addresses": [{"ip": "10.1.0.300"}, {"ip": "169.254.1.1"}]}))
    assert errs == [
        'subsets[0].addresses[0].ip: Invalid value: "10.1.0.300": must be a valid IP address, (e.g. 10.9.8.7 or '
        '2001:db8::ffff)',
        'subsets[0].addresses[0].ip: Invalid value: "10.1.0.300": must be a valid IP address',
        'subsets[0].addresses[1].ip: Invalid value: "169.254.1.1": may not be in the link-local range '
        '(169.254.0.0/16, fe80::/10)']


def test_endpoint_address_hostnames_are_dns_labels() -> None:
    errs = errors_of(EP, endpoints({"addresses": [{"ip": "10.1.0.1", "hostname": "Web_1"}]}))
    assert len(errs) == 1 and errs[0].startswith('subsets[0].addresses[0].hostname: Invalid value: "Web_1": a '
                                                 'lowercase RFC 1123 label')


def test_endpoint_ports_need_names_when_several_numbers_and_protocols() -> None:
    errs = errors_of(EP, endpoints({"addresses": [{"ip": "10.1.0.1"}],
                                    "ports": [{"port": 0}, {"name": "b", "port": 81, "protocol": "ICMP"}]}))
    assert errs == ["subsets[0].ports[0].name: Required value",
                    "subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                    'subsets[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"']


def test_print_endpoints_shows_three_host_ports_then_how_many_more() -> None:
    obj = endpoints({"addresses": [{"ip": f"10.1.0.{i}"} for i in range(1, 5)], "ports": [{"port": 80}]},
                    {"addresses": [{"ip": "fd00::1"}]})
    columns = EP.strategy.columns
    assert [c["name"] for c in columns.definitions] == ["Name", "Endpoints", "Age"]
    assert columns.cells(obj)[1] == "10.1.0.1:80,10.1.0.2:80,10.1.0.3:80 + 2 more..."
    assert columns.cells(endpoints({"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 80}]}))[1] == "[fd00::1]:80"
    assert columns.cells(endpoints())[1] == "<none>"


# ---- EndpointSlice -------------------------------------------------------------------------------------

def test_endpoint_slice_ports_default_to_an_empty_name_and_tcp() -> None:
    obj = endpoint_slice()
    assert obj["ports"] == [{"port": 80, "name": "", "protocol": "TCP"}]
    assert errors_of(SLICE, obj) == []


def test_address_type_is_required_and_known() -> None:
    assert errors_of(SLICE, endpoint_slice("")) == ["addressType: Required value"]
    assert errors_of(SLICE, endpoint_slice("IPX")) == [
        'addressType: Unsupported value: "IPX": supported values: "FQDN", "IPv4", "IPv6"']


def test_address_type_is_immutable() -> None:
    old = endpoint_slice()
    new = copy.deepcopy(old)
    new["addressType"], new["endpoints"][0]["addresses"] = "IPv6", ["fd00::1"]
    assert [str(e) for e in SLICE.strategy.validate_update(new, old)] == [
        'addressType: Invalid value: "IPv6": field is immutable']


def test_addresses_are_of_the_slice_type() -> None:
    assert errors_of(SLICE, endpoint_slice("IPv4", ("fd00::1",))) == [
        'endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address']
    assert errors_of(SLICE, endpoint_slice("IPv6", ("fd00::1",))) == []
    assert errors_of(SLICE, endpoint_slice("FQDN", ("db",))) == [
        'endpoints[0].addresses[0]: Invalid value: "db": should be a domain with at least two segments separated '
        'by dots']
    assert errors_of(SLICE, endpoint_slice("FQDN", ("db.example.com",))) == []


def test_an_endpoint_needs_an_address() -> None:
    assert errors_of(SLICE, endpoint_slice(addresses=())) == [
        "endpoints[0].addresses: Required value: must contain at least 1 address"]


def test_endpoint_slice_port_names_are_unique_and_protocols_known() -> None:
    errs = errors_of(SLICE, endpoint_slice(ports=[{"name": "a", "port": 80}, {"name": "a", "port": 81,
                                                                              "protocol": "ICMP"}]))
    assert errs == ['ports[1].name: Duplicate value: "a"',
                    'ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"']


def test_endpoint_slice_generation_counts_changes() -> None:
    assert SLICE.strategy.counts_generation


def test_print_endpoint_slice_columns_and_cells() -> None:
    columns = SLICE.strategy.columns
    assert [c["name"] for c in columns.definitions] == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    obj = endpoint_slice(addresses=("10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"),
                         ports=[{"name": "a", "port": 80}, {"name": "b"}, {}])
    obj["ports"][2].pop("name")
    assert columns.cells(obj)[1:4] == ["IPv4", "80,b,*", "10.1.0.1,10.1.0.2,10.1.0.3 + 1 more..."]
    assert columns.cells(endpoint_slice(addresses=(), ports=[]))[2:4] == ["<unset>", "<unset>"]


def test_an_fqdn_slice_warns_that_fqdn_endpoints_are_deprecated() -> None:
    assert SLICE.strategy.warnings(None, endpoint_slice("FQDN", ("db.example.com",)), "test") == [
        "spec.addressType: FQDN endpoints are deprecated"]
    assert SLICE.strategy.warnings(None, endpoint_slice(), "test") == []
