"""Out-of-process controllers: the built-in ones and a user module, over HTTPS with the admin kubeconfig."""

from __future__ import annotations

import signal
import socket
import sys
import textwrap
from functools import partial
from pathlib import Path

import httpx
import pytest
import trio

from runtime.client.kubeconfig import load_kubeconfig
from controllers.cli import load_controller_module, load_out_of_process, run_controllers, run_until_signalled
from runtime.client.http import open_http_client
from runtime.server.kinds.events import EVENT_KINDS
from runtime.controller.testing import wait_for_object
from tests.support.server import start_in_process, start_server

USER_MODULE = textwrap.dedent('''
    from runtime.client.interface import ObjectKey

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
                                        "resourcequota", "validatingadmissionpolicy-status",
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


def test_an_unreadable_kubeconfig_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match=f"cannot read kubeconfig {tmp_path}/missing: no such file or directory"):
        load_out_of_process(str(tmp_path / "missing"), [])


def test_a_module_without_setup_is_refused_naming_it(tmp_path):
    module = tmp_path / "nosetup.py"
    module.write_text("x = 1\n")
    with pytest.raises(ValueError, match=f"controller module {module}: no setup\\(manager\\) function"):
        load_out_of_process(str(write_kubeconfig(tmp_path)), [str(module)])


def write_kubeconfig(tmp_path: Path, server: str = "https://127.0.0.1:1") -> Path:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                          "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                          f"clusters: [{{name: k, cluster: {{server: '{server}'}}}}]\n"
                          "users: [{name: u, user: {token: t}}]\n")
    return kubeconfig


POSTPONED_MODULE = textwrap.dedent('''
    from __future__ import annotations

    from pydantic import BaseModel


    class Member(BaseModel):
        name: str


    class TeamSpec(BaseModel):
        members: list[Member] = []


    class Team(BaseModel):
        spec: TeamSpec


    def setup(manager):
        pass
''')


def test_a_module_loaded_by_path_resolves_its_postponed_annotations(tmp_path):
    path = tmp_path / "postponed_team.py"
    path.write_text(POSTPONED_MODULE)
    module = load_controller_module(str(path))
    try:
        team = module.Team.model_validate({"spec": {"members": [{"name": "ann"}]}})
        assert team.spec.members[0].name == "ann"
    finally:
        sys.modules.pop("postponed_team", None)


def test_a_module_that_fails_to_load_by_path_is_not_left_in_sys_modules(tmp_path):
    path = tmp_path / "broken_team.py"
    path.write_text("raise RuntimeError('broken at import')\n")
    with pytest.raises(RuntimeError, match="broken at import"):
        load_controller_module(str(path))
    assert "broken_team" not in sys.modules


# A controller of a custom kind whose CRD is not applied: its informer's list fails, it never syncs.
UNSERVED_KIND_MODULE = textwrap.dedent('''
    from runtime.machinery.scheme import ResourceType

    GIZMOS = ResourceType.of("example.com/v1", "Gizmo", "gizmos")
    managers = []

    def setup(manager):
        managers.append(manager)

        async def reconcile(key):
            pass

        manager.controller("gizmos").for_(GIZMOS).complete(reconcile)
''')


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_stops_the_controllers_while_informers_never_sync(nursery, tmp_path, autojump_clock, signum):
    server = await start_in_process(nursery, tmp_path)
    path = tmp_path / "gizmos.py"
    path.write_text(UNSERVED_KIND_MODULE)
    module = load_controller_module(str(path))
    redelivered: list[int] = []  # a signal left unread is redelivered when the receiver closes: not to pytest
    previous = signal.signal(signum, lambda n, frame: redelivered.append(n))
    try:
        stopped = trio.Event()

        async def run() -> None:
            await run_until_signalled(partial(run_controllers, load_kubeconfig(server.kubeconfig), [module],
                                              builtin=False, transport=server.transport))
            stopped.set()

        nursery.start_soon(run)
        with trio.fail_after(120):
            while not module.managers or module.managers[0].informers.informers()[0].statistics().errors < 3:
                await trio.sleep(1)
        assert not module.managers[0].informers.informers()[0].has_synced()
        signal.raise_signal(signum)
        with trio.fail_after(module.managers[0].grace_period):
            await stopped.wait()
    finally:
        signal.signal(signum, previous)
        sys.modules.pop("gizmos", None)
    assert redelivered == []


async def test_health_probes_are_served_out_of_process_once_asked(nursery, tmp_path):
    server = await start_server(nursery, tmp_path)
    with socket.socket() as probe:  # a free port the command is then told to bind (it says no URL back)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    await nursery.start(partial(run_controllers, load_kubeconfig(server.kubeconfig), [],
                                health_probe_bind_address=f"127.0.0.1:{port}"))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        healthz, readyz = await client.get("/healthz"), await client.get("/readyz?verbose")
    assert (healthz.status_code, healthz.text) == (200, "ok")
    assert readyz.status_code == 200 and "[+]informers ok" in readyz.text
