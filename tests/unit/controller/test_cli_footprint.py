"""What `miniplane controllers` has loaded while it runs: no server code (issue 40), counted in the running
process, once it follows a custom kind with the built-in controllers, not only from its imports
(`tests/unit/test_fast_start.py`): a server strategy bound late (a kind's `rt.strategy`) would show here.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import trio

from runtime.client.http import open_http_client
from runtime.client.kubeconfig import load_kubeconfig
from tests.support.crds import widget_crd
from tests.support.server import start_server
from tests.support.serverproc import ROOT
from tests.support.cli import read_lines
from tests.support.footprint import COMMAND_LINE, server_code

# Prints every loaded module once the CRD's kind is on the scheme (the follower registered it).
FOOTPRINT_MODULE = textwrap.dedent('''
    import sys

    from runtime.controller.controller import Result

    def setup(manager):
        async def reconcile(key):
            if manager.scheme.by_kind("Widget") is None:
                return Result(requeue_after=0.05)
            print("loaded", " ".join(sorted(sys.modules)), flush=True)

        manager.controller("footprint").for_(manager.scheme.by_kind("Namespace")).complete(reconcile)
''')


async def test_running_controllers_load_no_server_code(nursery, tmp_path):
    server = await start_server(nursery, tmp_path, controllers=False)  # the CRD is established out of process
    async with open_http_client(load_kubeconfig(server.kubeconfig)) as client:
        await client.create(widget_crd(server.domain))
    module = tmp_path / "footprint_controllers.py"
    module.write_text(FOOTPRINT_MODULE)
    with (tmp_path / "controllers.log").open("wb") as log:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "api.cli", "controllers", "--kubeconfig", str(server.kubeconfig),
             "--module", str(module)], cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log)
    try:
        with trio.fail_after(60):
            lines = await read_lines(process.stdout, until="loaded")
    finally:
        process.kill()
        await process.wait()
    assert lines and lines[-1].startswith("loaded"), (tmp_path / "controllers.log").read_text()
    loaded = lines[-1].split()[1:]
    assert [m for m in server_code(loaded) if m not in COMMAND_LINE and m.split(".")[0] != "controllers"] == []
    assert {"runtime.controller.customkinds", "controllers.gc", "runtime.client.http"} <= set(loaded)
