"""Services, Endpoints and EndpointSlices through the in-process env and registries: cluster IPs and node ports
allocated from the server's ranges, conflicts in kube's words, released on delete and on a type change, nothing
taken by a dry run or left by a failed create, one range shared by two servers over one store, the status
subresource, the Table. Memory store only."""

from __future__ import annotations

import copy
import ipaddress
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import pytest
import trio

from runtime.client.interface import APPLY_PATCH
from runtime.client.local import LocalClient
from runtime.controller.testing import ADMIN, open_test_env
from runtime.machinery import errors
from runtime.machinery.scheme import Scheme
from runtime.server.bootstrap import bootstrap
from runtime.server.kinds.base import AdmissionRequest
from runtime.server.kinds.services import ServiceRanges
from runtime.server.registry import Registry
from runtime.server.storage import MemoryStore
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")
TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}
ALLOCATED = "provided IP is already allocated"


def service(name: str = "web", **spec: Any) -> dict[str, Any]:
    spec.setdefault("ports", [{"port": 80}])
    spec.setdefault("selector", {"app": name})
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def services(env: Any) -> Any:
    return env.scheme.by_api_version_kind("v1", "Service")


async def reservation_keys(registry: Any) -> list[str]:
    found = []
    for prefix in ("/service-cluster-ips/", "/service-node-ports/"):
        found += [e.key for e in (await registry.store.list(prefix))[0]]
    return found


@asynccontextmanager
async def two_servers(cidr: str, ports: str) -> AsyncIterator[tuple[LocalClient, LocalClient]]:
    """Two registries (two servers) over one store, with the same small ranges."""
    store = MemoryStore()
    ranges = ServiceRanges.parse(cidr, ports)
    first, second = (Registry(store, Scheme("k8s.io"), service_ranges=ranges) for _ in range(2))
    async with trio.open_nursery() as nursery:
        await nursery.start(first.run)
        await nursery.start(second.run)
        await bootstrap(first)
        yield LocalClient(first, ADMIN, field_manager="a"), LocalClient(second, ADMIN, field_manager="b")
        nursery.cancel_scope.cancel()


async def test_a_cluster_ip_service_gets_an_ip_of_the_range_and_its_families(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service())
        spec = made["spec"]
        assert ipaddress.ip_address(spec["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
        assert spec["clusterIPs"] == [spec["clusterIP"]]
        assert (spec["ipFamilies"], spec["ipFamilyPolicy"], spec["type"]) == (["IPv4"], "SingleStack", "ClusterIP")
        assert await reservation_keys(env.registry) == [f"/service-cluster-ips/{spec['clusterIP']}"]


async def test_a_requested_ip_already_allocated_is_422(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(service("a", clusterIP="10.96.0.20"))
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(service("b", clusterIP="10.96.0.20"))
        assert str(caught.value) == ('Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.20"}: '
                                     f"failed to allocate IP 10.96.0.20: {ALLOCATED}")


async def test_a_requested_ip_out_of_the_range_is_422(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(service(clusterIP="192.168.0.1"))
        assert "failed to allocate IP 192.168.0.1: the provided IP (192.168.0.1) is not in the valid range. " \
               "The range of valid IPs is 10.96.0.0/12" in str(caught.value)


async def test_node_ports_are_allocated_and_requested_ones_checked(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service("a", type="NodePort", ports=[{"name": "h", "port": 80},
                                                                            {"name": "p", "port": 81,
                                                                             "nodePort": 30081}]))
        first, second = (p["nodePort"] for p in made["spec"]["ports"])
        assert 30000 <= first <= 32767 and second == 30081
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(service("b", type="NodePort", ports=[{"port": 80, "nodePort": 30081}]))
        assert str(caught.value) == ('Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30081: provided '
                                     "port is already allocated")
        with pytest.raises(errors.Invalid) as caught:
            await env.client.create(service("c", type="NodePort", ports=[{"port": 80, "nodePort": 80}]))
        assert str(caught.value) == ('Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided '
                                     "port is not in the valid range. The range of valid ports is 30000-32767")


async def test_headless_and_external_name_services_get_no_ip(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        headless = await env.client.create(service("h", clusterIP="None"))
        assert headless["spec"]["clusterIPs"] == ["None"]
        named = await env.client.create(service("n", type="ExternalName", externalName="db.example.com", ports=[]))
        assert "clusterIP" not in named["spec"] and "ipFamilies" not in named["spec"]
        assert await reservation_keys(env.registry) == []


async def test_a_deleted_services_ip_and_node_port_are_free_again(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(service("a", type="NodePort", clusterIP="10.96.0.30",
                                        ports=[{"port": 80, "nodePort": 30300}]))
        await env.client.delete(services(env), "a", namespace="default")
        assert await reservation_keys(env.registry) == []  # released as the delete removed it
        again = await env.client.create(service("b", type="NodePort", clusterIP="10.96.0.30",
                                                ports=[{"port": 80, "nodePort": 30300}]))
        assert again["spec"]["clusterIP"] == "10.96.0.30" and again["spec"]["ports"][0]["nodePort"] == 30300


async def test_a_recreated_service_of_the_same_name_takes_its_old_ip(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        await env.client.create(service("a", clusterIP="10.96.0.31"))
        await env.client.delete(services(env), "a", namespace="default")
        assert (await env.client.create(service("a", clusterIP="10.96.0.31")))["spec"]["clusterIP"] == "10.96.0.31"


async def test_a_dry_run_allocates_nothing(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        answered = await env.client.create(service("a", type="NodePort"), dry_run=True)
        assert answered["spec"]["clusterIP"] and answered["spec"]["ports"][0]["nodePort"]
        assert await reservation_keys(env.registry) == []
        await env.client.create(service("b", clusterIP="10.96.0.40"))
        with pytest.raises(errors.Invalid, match=ALLOCATED):
            await env.client.create(service("c", clusterIP="10.96.0.40"), dry_run=True)


async def test_a_failed_create_releases_what_it_reserved(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        bad = service("a", type="NodePort", clusterIP="10.96.0.50", ports=[{"name": "Bad_Name", "port": 80,
                                                                            "nodePort": 30500}])
        with pytest.raises(errors.Invalid, match="spec.ports\\[0\\].name"):
            await env.client.create(bad)
        assert await reservation_keys(env.registry) == []
        await env.client.create(service("taken"))
        with pytest.raises(errors.AlreadyExists):
            await env.client.create(service("taken", clusterIP="10.96.0.51"))
        made = await env.client.create(service("b", type="NodePort", clusterIP="10.96.0.51",
                                                ports=[{"port": 80, "nodePort": 30500}]))
        assert made["spec"]["clusterIP"] == "10.96.0.51"


async def test_a_type_change_to_cluster_ip_releases_the_node_ports(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service("a", type="NodePort", ports=[{"port": 80, "nodePort": 30600}]))
        made["spec"]["type"] = "ClusterIP"
        updated = await env.client.update(made)
        assert "nodePort" not in updated["spec"]["ports"][0]
        assert updated["spec"]["clusterIP"] == made["spec"]["clusterIP"]
        assert await reservation_keys(env.registry) == [f"/service-cluster-ips/{made['spec']['clusterIP']}"]
        back = await env.client.patch(services(env), "a", {"spec": {"type": "NodePort"}}, namespace="default")
        assert 30000 <= back["spec"]["ports"][0]["nodePort"] <= 32767


async def test_a_type_change_to_external_name_releases_the_ip(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service("a", clusterIP="10.96.0.60"))
        made["spec"].update(type="ExternalName", externalName="db.example.com")
        updated = await env.client.update(made)
        assert "clusterIP" not in updated["spec"] and await reservation_keys(env.registry) == []


async def test_the_cluster_ip_may_not_change_and_an_update_without_it_keeps_it(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service("a", type="NodePort"))
        changed = copy.deepcopy(made)
        changed["spec"]["clusterIP"] = "10.96.0.70"
        with pytest.raises(errors.Invalid) as caught:
            await env.client.update(changed)
        assert 'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.70"}: may not change once set' in str(caught.value)
        resent = copy.deepcopy(made)
        for name in ("clusterIP", "clusterIPs"):
            resent["spec"].pop(name)
        resent["spec"]["ports"][0].pop("nodePort")
        kept = await env.client.update(resent)
        assert kept["spec"]["clusterIP"] == made["spec"]["clusterIP"]
        assert kept["spec"]["ports"] == made["spec"]["ports"]
        assert kept["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]  # nothing changed


async def test_the_status_subresource_writes_the_load_balancer_ingress_only(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service("lb", type="LoadBalancer"))
        made["status"] = {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}
        made["spec"]["sessionAffinity"] = "ClientIP"
        written = await env.client.update(made, subresource="status")
        assert written["status"]["loadBalancer"]["ingress"] == [{"ip": "203.0.113.9"}]
        assert written["spec"]["sessionAffinity"] == "None"
        spec_write = copy.deepcopy(written)
        spec_write["status"] = {}
        assert (await env.client.update(spec_write))["status"] == written["status"]


async def test_the_serve_ranges_reach_the_registry_and_kubectl_get_prints_kubes_columns(
        nursery: Any, tmp_path: Any, autojump_clock: Any) -> None:
    srv = await start_in_process(nursery, tmp_path, api_domain="k8s.io", service_cluster_ip_range="10.200.0.0/24",
                                 service_node_port_range="31000-31010")
    async with srv.client() as c:
        made = await c.post("/api/v1/namespaces/default/services", json=service("web", type="NodePort"))
        assert made.status_code == 201, made.text
        spec = made.json()["spec"]
        assert spec["clusterIP"].startswith("10.200.0.") and 31000 <= spec["ports"][0]["nodePort"] <= 31010
        table = (await c.get("/api/v1/namespaces/default/services", headers=TABLE)).json()
        assert [d["name"] for d in table["columnDefinitions"]] == [
            "Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
        assert table["rows"][0]["cells"][:5] == ["web", "NodePort", spec["clusterIP"], "<none>",
                                                 f"80:{spec['ports'][0]['nodePort']}/TCP"]
        assert table["rows"][0]["cells"][6] == "app=web"


async def test_two_servers_over_one_store_never_hand_out_one_ip_twice(autojump_clock: Any) -> None:
    async with two_servers("10.0.0.0/28", "30000-30031") as (a, b):
        made: list[dict[str, Any]] = []

        async def make(client: LocalClient, i: int) -> None:
            made.append(await client.create(service(f"s{i}", type="NodePort")))

        async with trio.open_nursery() as nursery:
            for i in range(14):  # a /28 hands out 14 addresses
                nursery.start_soon(make, a if i % 2 else b, i)
        ips = [m["spec"]["clusterIP"] for m in made]
        ports = [m["spec"]["ports"][0]["nodePort"] for m in made]
        assert len(set(ips)) == 14 and len(set(ports)) == 14
        with pytest.raises(errors.InternalError, match="failed to allocate a serviceIP: range is full"):
            await a.create(service("full"))


async def test_endpoints_and_endpoint_slices_are_stored_and_checked(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create({"apiVersion": "v1", "kind": "Endpoints",
                                        "metadata": {"name": "web", "namespace": "default"},
                                        "subsets": [{"addresses": [{"ip": "10.1.0.1"}], "ports": [{"port": 80}]}]})
        assert made["subsets"][0]["ports"][0]["protocol"] == "TCP"
        piece = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": "web-1", "namespace": "default"}, "addressType": "IPv4",
                 "endpoints": [{"addresses": ["10.1.0.1"]}], "ports": [{"port": 80}]}
        slice_made = await env.client.create(piece)
        assert slice_made["metadata"]["generation"] == 1
        slice_made["addressType"] = "FQDN"
        with pytest.raises(errors.Invalid, match='addressType: Invalid value: "FQDN": field is immutable'):
            await env.client.update(slice_made)


async def test_a_settled_delete_releases_the_services_values_at_once(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service("a", type="NodePort"))
        request = AdmissionRequest(ADMIN, services(env), "delete", made, made, False)
        await services(env).strategy.admit(env.registry, request)
        await request.finish(True)
        assert len(await reservation_keys(env.registry)) == 2  # still stored: nothing released
        await env.client.delete(services(env), "a", namespace="default")
        await request.finish(True)
        assert await reservation_keys(env.registry) == []


async def test_a_type_change_from_external_name_allocates_an_ip(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service("a", type="ExternalName", externalName="db.example.com"))
        made["spec"].update(type="ClusterIP")
        made["spec"].pop("externalName")
        updated = await env.client.update(made)
        assert ipaddress.ip_address(updated["spec"]["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
        assert updated["spec"]["ipFamilies"] == ["IPv4"]


async def test_load_balancers_get_node_ports_unless_asked_not_and_a_local_one_a_health_check_port(
        autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        local = await env.client.create(service("a", type="LoadBalancer", externalTrafficPolicy="Local"))
        assert local["spec"]["ports"][0]["nodePort"] and 30000 <= local["spec"]["healthCheckNodePort"] <= 32767
        assert local["spec"]["healthCheckNodePort"] != local["spec"]["ports"][0]["nodePort"]
        bare = await env.client.create(service("b", type="LoadBalancer", allocateLoadBalancerNodePorts=False))
        assert "nodePort" not in bare["spec"]["ports"][0]
        assert len(await reservation_keys(env.registry)) == 4  # two IPs, a node port, a health check port


async def test_a_delete_answers_the_deleted_service(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(service("a"))
        gone = await env.client.delete(services(env), "a", namespace="default")
        assert gone["kind"] == "Service" and gone["metadata"]["uid"] == made["metadata"]["uid"]


async def test_a_put_of_a_missing_endpoint_slice_is_404_and_of_missing_endpoints_creates(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        piece = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": "web-1", "namespace": "default"}, "addressType": "IPv4",
                 "endpoints": [{"addresses": ["10.1.0.1"]}]}
        with pytest.raises(errors.NotFound):
            await env.client.update(piece)
        made = await env.client.update({"apiVersion": "v1", "kind": "Endpoints",
                                        "metadata": {"name": "web", "namespace": "default"}})
        assert made["metadata"]["uid"]


async def test_a_new_service_has_an_empty_load_balancer_status_as_kube_answers(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        made = await env.client.create(dict(service("a"), status={"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}))
        assert made["status"] == {"loadBalancer": {}}
        made["status"] = {}
        assert (await env.client.update(made, subresource="status"))["status"] == {"loadBalancer": {}}


async def test_a_server_side_apply_sent_again_keeps_the_allocated_values_and_changes_nothing(
        autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        manifest = service("a", type="NodePort", ports=[{"name": "http", "port": 80, "targetPort": 8080}])
        first = await env.client.patch(services(env), "a", manifest, patch_type=APPLY_PATCH, namespace="default",
                                       field_manager="deployer")
        again = await env.client.patch(services(env), "a", manifest, patch_type=APPLY_PATCH, namespace="default",
                                       field_manager="deployer")
        assert again["spec"]["clusterIP"] == first["spec"]["clusterIP"]
        assert again["spec"]["ports"][0]["nodePort"] == first["spec"]["ports"][0]["nodePort"]
        assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
