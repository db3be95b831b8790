"""Out-of-process controllers: the built-in ones and a user module, over HTTPS with the admin kubeconfig."""

from __future__ import annotations

import textwrap

import trio

from runtime.kubeconfig import load_kubeconfig
from controllers.cli import load_controller_module, run_controllers, run_out_of_process
from runtime.client_http import open_http_client
from runtime.kinds.events import EVENT_KINDS
from runtime.testing import wait_for_object
from tests.support.server import start_server

USER_MODULE = textwrap.dedent('''
    from runtime.client import ObjectKey

    seen = []

    def setup(manager):
        async def reconcile(key: ObjectKey) -> None:
            seen.append(str(key))

        manager.controller("namespace-recorder").for_(manager.scheme.by_kind("Namespace")).complete(reconcile)
''')


async def test_builtin_and_user_controllers_run_out_of_process_over_http(nursery, tmp_path):
    server = await start_server(nursery, tmp_path)
    path = tmp_path / "recorder.py"
    path.write_text(USER_MODULE)
    module = load_controller_module(str(path))
    config = load_kubeconfig(server.kubeconfig)
    manager = await nursery.start(run_controllers, config, [module])
    gc = {f"garbage-collector-{t.group_resource}" for t in manager.scheme.stored_types()}
    ttl = {f"event-ttl-{t.group_resource}" for t in manager.scheme.types if t.info in EVENT_KINDS}
    assert set(manager.controllers) == {"namespace", "clusterrole-aggregation", "customresourcedefinition",
                                        "namespace-recorder"} | gc | ttl
    async with open_http_client(config) as client:
        namespaces = client.scheme.by_kind("Namespace")
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "remote"}})
        await client.create({"apiVersion": f"rbac.authorization.{client.scheme.domain}/v1", "kind": "Role",
                             "metadata": {"name": "r", "namespace": "remote"}, "rules": []})
        await client.delete(namespaces, "remote")
        with trio.fail_after(20):
            await wait_for_object(client, namespaces, "remote", lambda o: o is None)
        assert (await client.list(client.scheme.by_kind("Role"), namespace="remote")).items == []
    assert "default" in module.seen and "remote" in module.seen


def test_unreadable_kubeconfig_exits_with_2(tmp_path, capsys):
    assert run_out_of_process(str(tmp_path / "missing"), []) == 2
    assert "cannot read kubeconfig" in capsys.readouterr().err


def test_module_without_setup_exits_with_2(tmp_path, capsys):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                          "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                          "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {token: t}}]\n")
    module = tmp_path / "nosetup.py"
    module.write_text("x = 1\n")
    assert run_out_of_process(str(kubeconfig), [str(module)]) == 2
    assert "no setup(manager)" in capsys.readouterr().err
