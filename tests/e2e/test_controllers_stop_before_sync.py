"""`miniplane controllers` stops on SIGTERM or SIGINT before its informers synced: a controller of a kind whose
CRD is not applied (its list fails, retried forever) does not keep the process from exiting 0."""

from __future__ import annotations

import inspect
import signal
import textwrap

import pytest
import trio

from runtime.controller.manager import Manager
from tests.support.server import start_server
from tests.support.serverproc import controllers_process

UNSERVED_KIND_MODULE = textwrap.dedent('''
    from runtime.machinery.scheme import ResourceType

    GIZMOS = ResourceType.of("example.com/v1", "Gizmo", "gizmos")

    def setup(manager):
        async def reconcile(key):
            pass

        manager.controller("gizmos").for_(GIZMOS).complete(reconcile)
''')

#: The manager's default: a signal must stop the process within it, whatever its informers do.
GRACE_PERIOD = inspect.signature(Manager).parameters["grace_period"].default


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_stops_controllers_whose_informers_never_synced(nursery, tmp_path, signum):
    server = await start_server(nursery, tmp_path)
    module = tmp_path / "gizmos.py"
    module.write_text(UNSERVED_KIND_MODULE)
    log = tmp_path / "controllers.log"
    async with controllers_process(server.kubeconfig, module, log) as process:
        with trio.fail_after(60):  # the process starts, and its informer's list fails twice
            while log.read_text().count("<Informer gizmos.example.com ns=''>: list failed") < 2:
                await trio.sleep(0.1)
        process.send_signal(signum)
        with trio.fail_after(GRACE_PERIOD):
            code = await process.wait()
    assert code == 0, log.read_text()
