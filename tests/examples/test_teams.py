"""The custom-kind example (`examples/teams.py`, CRD `manifests/teams.example.com.yaml`), in process and out of process.

A Team gets its namespace and a RoleBinding per member (owned by the Team),
reports Ready in `status.conditions`, records events; a member removed or
changed is unbound or rebound, a binding deleted by hand comes back, the
CRD's CEL rule refuses a fourth admin, and deleting the Team removes the
namespace and the bindings (garbage collection, namespace deletion).
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

import examples.teams as example
from controllers import builtin
from runtime.machinery import errors
from runtime.client.interface import Client
from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from runtime.models.meta import ObjectMeta
from runtime.controller.testing import open_test_env, wait_for_object
from tests.support.crds import load_manifest
from tests.support.server import start_server
from tests.support.serverproc import controllers_process, stop_cleanly

#: How long the controllers may take to converge on a loaded test machine (mock time in process).
DEADLINE = 60


def team_crd(domain: str) -> dict[str, Any]:
    """The example's CRD as its manifest says, under the server's API domain."""
    crd = load_manifest("manifests/teams.example.com.yaml")
    crd["apiVersion"] = f"apiextensions.{domain}/v1"
    return crd


async def install_crd(client: Client) -> None:
    crds = client.scheme.by_kind("CustomResourceDefinition")
    await client.create(team_crd(client.scheme.domain))
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, crds, "teams.example.com", lambda o: o and any(
            c["type"] == "Established" and c["status"] == "True" for c in (o.get("status") or {}).get("conditions", [])))


def ready(team: example.Team | None) -> example.Condition | None:
    return next((c for c in team.status.conditions if c.type == "Ready"), None) if team else None


async def wait_team(client: Client, condition) -> example.Team:
    def check(obj: dict | None) -> bool:
        return obj is not None and condition(example.Team.model_validate(obj))
    with trio.fail_after(DEADLINE):
        return example.Team.model_validate(await wait_for_object(client, example.TEAMS, "platform", check))


async def a_team_gets_a_namespace_and_a_binding_per_member(client: Client) -> None:
    namespaces, bindings = client.scheme.by_kind("Namespace"), client.scheme.by_kind("RoleBinding")
    rbac = client.scheme.rbac_group
    created = await client.create(example.Team(metadata=ObjectMeta(name="platform"), spec=example.TeamSpec(members=[
        example.Member(name="alice@example.com", role="admin"), example.Member(name="devs", kind="Group")])))
    assert isinstance(created, example.Team) and created.spec.members[1].role == "view"  # the schema's default

    team = await wait_team(client, lambda t: (c := ready(t)) is not None and c.status == "True")
    assert (team.status.namespace, team.status.members, team.status.observed_generation) == ("team-platform", 2, 1)
    assert ready(team).message == "namespace team-platform and 2 RoleBindings are in place"
    namespace = await client.get(namespaces, "team-platform")
    assert namespace["metadata"]["ownerReferences"][0]["uid"] == team.metadata.uid
    listed = {b["metadata"]["name"]: b for b in (await client.list(bindings, namespace="team-platform")).items}
    assert listed["member-alice-example.com"]["roleRef"] == {"apiGroup": rbac, "kind": "ClusterRole", "name": "admin"}
    assert listed["member-alice-example.com"]["subjects"] == [{"apiGroup": rbac, "kind": "User",
                                                               "name": "alice@example.com"}]
    assert listed["member-devs"]["subjects"][0]["kind"] == "Group"

    # Deleted by hand: made again.
    await client.delete(bindings, "member-devs", namespace="team-platform")
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, bindings, "member-devs", lambda b: b is not None, namespace="team-platform")

    # A member removed and a role changed: unbound and rebound; status follows the new generation.
    team = await client.get(example.Team, "platform")
    team.spec.members = [example.Member(name="alice@example.com", role="edit")]
    await client.update(team)
    team = await wait_team(client, lambda t: t.status.observed_generation == 2 and t.status.members == 1)
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, bindings, "member-devs", lambda b: b is None, namespace="team-platform")
    alice = await client.get(bindings, "member-alice-example.com", namespace="team-platform")
    assert alice["roleRef"]["name"] == "edit"

    # What the controller did, as events about the Team (kubectl describe team platform shows them).
    events = client.scheme.by_kind("Event")
    with trio.fail_after(DEADLINE):
        while True:  # events are written in the background by the manager's broadcaster
            reasons = {e["reason"] for e in (await client.list(events, namespace="default",
                                                                field_selector="involvedObject.name=platform")).items}
            if {"NamespaceCreated", "MemberBound", "MemberUnbound"} <= reasons:
                break
            await trio.sleep(0.1)

    # The CRD's CEL rule.
    team.spec.members = [example.Member(name=f"admin-{i}", role="admin") for i in range(4)]
    with pytest.raises(errors.Invalid) as refused:
        await client.update(team)
    assert "a team has at most 3 admins" in str(refused.value)

    # Deleting the Team deletes what it owns.
    await client.delete(example.TEAMS, "platform")
    with trio.fail_after(DEADLINE):
        await wait_for_object(client, namespaces, "team-platform", lambda n: n is None)
    assert (await client.list(bindings, namespace="team-platform")).items == []


async def test_the_team_example_keeps_namespace_bindings_and_status_in_process(autojump_clock):
    async with open_test_env() as env:
        server_side = env.manager()
        builtin.setup(server_side)  # what a server runs: CRD establishment, GC, namespace deletion
        await env.start(server_side)
        await install_crd(env.client)
        manager = env.manager()
        example.setup(manager)
        await env.start(manager)
        await a_team_gets_a_namespace_and_a_binding_per_member(env.client)


async def test_the_team_example_runs_out_of_process_with_miniplane_controllers(nursery, tmp_path):
    server = await start_server(nursery, tmp_path, controllers=True)
    log = tmp_path / "controllers.log"
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        await install_crd(client)
        async with controllers_process(server.kubeconfig, "examples.teams", log) as process:
            await a_team_gets_a_namespace_and_a_binding_per_member(client)
            await stop_cleanly(process, log)
