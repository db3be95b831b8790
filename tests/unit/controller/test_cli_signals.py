"""`miniplane controllers` stops cleanly on SIGINT and SIGTERM: queued keys are drained, none is lost, exit 0."""

from __future__ import annotations

import signal
import textwrap

import pytest
import trio

from runtime.client.kubeconfig import load_kubeconfig
from runtime.client.http import open_http_client
from tests.support.cli import read_lines
from tests.support.server import start_server
from tests.support.serverproc import controllers_process


# Reconciles one key at a time, slowly, and says so on stdout.
SLOW_MODULE = textwrap.dedent('''
    import trio

    def setup(manager):
        async def reconcile(key):
            if key.namespace != "drain":
                return
            print("start", key.name, flush=True)
            await trio.sleep(0.2)
            print("done", key.name, flush=True)

        manager.controller("slow").for_(manager.scheme.by_kind("Role")).complete(reconcile)
''')


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_drains_the_queued_keys_then_exits_0(nursery, tmp_path, signum):
    server = await start_server(nursery, tmp_path)
    module = tmp_path / "slow_controllers.py"
    module.write_text(SLOW_MODULE)
    names = [f"r{i}" for i in range(5)]
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "drain"}})
        for name in names:  # all queued at once by the first list
            await client.create({"apiVersion": f"{client.scheme.rbac_group}/v1", "kind": "Role",
                                 "metadata": {"name": name, "namespace": "drain"}, "rules": []})
    log = tmp_path / "controllers.log"
    async with controllers_process(server.kubeconfig, module, log, piped_stdout=True) as process:
        assert process.stdout is not None
        with trio.fail_after(30):
            before = await read_lines(process.stdout, until="start")
            process.send_signal(signum)  # one reconcile running, four queued
            after = await read_lines(process.stdout)
            code = await process.wait()
        lines = before + after
        assert code == 0, log.read_text()
        assert [line for line in lines if line.startswith("done")] == [f"done {n}" for n in names]
        assert [line for line in lines if line.startswith("start")] == [f"start {n}" for n in names]
