"""The worked example (`examples/team_rolebindings.py`) against a real server, in process and out of process."""

from __future__ import annotations


import trio

import examples.team_rolebindings as example
from runtime.client.kubeconfig import load_kubeconfig
from controllers import builtin
from runtime.client.http import open_http_client
from runtime.controller.testing import open_test_env, wait_for_object
from tests.support.server import start_server
from tests.support.serverproc import controllers_process, stop_cleanly



def namespace(name: str, labels: dict[str, str] | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}


async def grants_view_to_team_x(client) -> None:
    """Label, unlabel, delete the binding: the controller keeps the binding exactly where `team=x` is."""
    rbac, namespaces = client.scheme.rbac_group, client.scheme.by_kind("Namespace")
    bindings = client.scheme.by_kind("RoleBinding")

    def granted(binding: dict | None) -> bool:
        return binding is not None and binding["roleRef"] == {"apiGroup": rbac, "kind": "ClusterRole",
                                                               "name": "view"} and binding["subjects"] == [
            {"apiGroup": rbac, "kind": "Group", "name": "team-x"}]

    await client.create(namespace("team-a", {"team": "x"}))
    await client.create(namespace("team-b", {"team": "y"}))
    with trio.fail_after(30):
        first = await wait_for_object(client, bindings, example.BINDING, granted, namespace="team-a")
        # Deleted by someone: restored (the binding is owned by its namespace).
        await client.delete(bindings, example.BINDING, namespace="team-a")
        await wait_for_object(client, bindings, example.BINDING,
                              lambda b: granted(b) and b["metadata"]["uid"] != first["metadata"]["uid"],
                              namespace="team-a")
        # Labelled later: granted; label removed: revoked.
        await client.patch(namespaces, "team-b", {"metadata": {"labels": {"team": "x"}}})
        await wait_for_object(client, bindings, example.BINDING, granted, namespace="team-b")
        await client.patch(namespaces, "team-a", {"metadata": {"labels": {"team": None}}})
        await wait_for_object(client, bindings, example.BINDING, lambda b: b is None, namespace="team-a")


async def test_the_example_keeps_bindings_in_labelled_namespaces_in_process(autojump_clock):
    async with open_test_env() as env:
        manager = env.manager()
        builtin.setup(manager)  # aggregation fills ClusterRole `view`, as in a server
        example.setup(manager)
        await env.start(manager)
        await env.client.create(namespace("untouched"))
        await grants_view_to_team_x(env.client)
        await trio.sleep(10)  # mock time: a binding the example wrongly made in `untouched` would be there
        bindings = env.scheme.by_kind("RoleBinding")
        assert (await env.client.list(bindings, namespace="untouched")).items == []
        # What the binding is for: team-x may now read in team-b (Kubernetes' `view`: pods, not roles).
        await env.wait_for(env.scheme.by_kind("ClusterRole"), "view", lambda role: role and role.get("rules"))
        review = await env.client.create({
            "apiVersion": f"{env.scheme.authz_group}/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "alice", "groups": ["team-x"], "resourceAttributes": {
                "namespace": "team-b", "verb": "list", "group": "", "resource": "pods"}}})
        assert review["status"]["allowed"] is True


async def test_the_example_runs_out_of_process_with_miniplane_controllers(nursery, tmp_path):
    server = await start_server(nursery, tmp_path)
    log = tmp_path / "controllers.log"
    async with controllers_process(server.kubeconfig, "examples.team_rolebindings", log) as process:
        async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
            await grants_view_to_team_x(client)
        await stop_cleanly(process, log)
