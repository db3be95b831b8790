"""The server runs the built-in controllers in-process (`controllers.builtin_manager`)."""

from __future__ import annotations

import trio

from runtime.client.kubeconfig import load_kubeconfig
from controllers.aggregation import same_rules
from runtime.client.http import open_http_client
from runtime.controller.informer import Informer
from runtime.controller.testing import wait_for_object
from tests.support.server import start_server

WIDGETS = {"apiGroups": ["widgets.example.com"], "resources": ["widgets"], "verbs": ["get"]}


async def test_server_with_controllers_finishes_namespace_deletion_and_aggregates_roles(nursery, tmp_path):
    server = await start_server(nursery, tmp_path, controllers=True)
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        namespaces, roles = client.scheme.by_kind("Namespace"), client.scheme.by_kind("ClusterRole")
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}})
        await client.create({"apiVersion": roles.api_version, "kind": "RoleBinding",
                             "metadata": {"name": "b", "namespace": "doomed"},
                             "roleRef": {"apiGroup": roles.group, "kind": "ClusterRole", "name": "view"},
                             "subjects": [{"kind": "User", "name": "u"}]})
        await client.delete(namespaces, "doomed")
        view = await client.get(roles, "view")
        labels = view["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"]
        await client.create({"apiVersion": roles.api_version, "kind": "ClusterRole",
                             "metadata": {"name": "widgets", "labels": labels}, "rules": [WIDGETS]})
        with trio.fail_after(20):
            await wait_for_object(client, namespaces, "doomed", lambda o: o is None)
            await wait_for_object(client, roles, "admin",
                                  lambda o: o and any(same_rules([r], [WIDGETS]) for r in o["rules"]))


async def test_informer_over_http_holds_the_server_state(nursery, tmp_path):
    server = await start_server(nursery, tmp_path)
    async with open_http_client(load_kubeconfig(server.kubeconfig), protobuf=True) as client:
        roles = client.scheme.by_kind("ClusterRole")
        informer = Informer(client, roles)
        await nursery.start(informer.run)
        written = await client.create({"apiVersion": roles.api_version, "kind": "ClusterRole",
                                       "metadata": {"name": "late"}, "rules": []})
        await client.delete(roles, "edit")
        marker = await client.create({"apiVersion": roles.api_version, "kind": "ClusterRole",
                                      "metadata": {"name": "marker"}, "rules": []})
        with trio.fail_after(20):
            await informer.wait_for(marker["metadata"]["resourceVersion"])
        page = await client.list(roles)
        assert {str(k) for k in informer.keys()} == {r["metadata"]["name"] for r in page.items}
        assert informer.get("late")["metadata"]["uid"] == written["metadata"]["uid"]
        assert informer.get("edit") is None
