"""kopf's own example operators, run unmodified as `kopf run --standalone` processes against a test's server.

Contract: the examples are those of kopf's source distribution on PyPI
(`examples/` of `kopf-<installed version>.tar.gz`, the same files as
github.com/nolar/kopf at the release's tag), which `make kopf-examples`
unpacks under `.venv/kopf-examples/`; nothing is copied into the repository.

- `kopf_examples_dir()` is that directory; it fails the test (never skips)
  when the examples are missing.
- `await run_kopf(server, example, log, until)` runs `kopf run --standalone
  --all-namespaces --verbose example` with the server's admin kubeconfig
  (its output in `log`) until `await until()` returns, within `DEADLINE`
  seconds; then stops it with SIGTERM and asserts it exits 0. kopf's log is
  printed when anything fails.
- `await install_kopf_crd(kubectl, examples)` applies kopf's
  `examples/crd.yaml` (the `KopfExample` kind, short name `kex`) and waits
  until it is Established; `kopf_object(examples, name)` is kopf's
  `examples/obj.yaml` under `name`, as JSON bytes for kubectl's stdin.
"""

from __future__ import annotations

import importlib.metadata
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Awaitable, Callable

import pytest
import trio
import yaml

from runtime.machinery.scheme import ResourceType
from tests.support.kubectl import Kubectl
from tests.support.server import Server

__all__ = ["DEADLINE", "KOPF_EXAMPLES", "KOPF_EXAMPLES_KIND", "kopf_examples_dir", "run_kopf",
           "install_kopf_crd", "kopf_object"]

KOPF_VERSION = importlib.metadata.version("kopf")
KOPF_EXAMPLES = Path(sys.prefix) / "kopf-examples" / f"kopf-{KOPF_VERSION}" / "examples"
KOPF_EXAMPLES_KIND = ResourceType.of("kopf.dev/v1", "KopfExample", "kopfexamples")
#: How long kopf may take to start and act, on a loaded test machine.
DEADLINE = 60


def kopf_examples_dir() -> Path:
    """The unpacked examples; fails the test if `make kopf-examples` has not unpacked them."""
    if not (KOPF_EXAMPLES / "01-minimal" / "example.py").exists():
        pytest.fail(f"kopf's examples are not at {KOPF_EXAMPLES}: run `make kopf-examples` (make test does)")
    return KOPF_EXAMPLES


async def run_kopf(server: Server, example: Path, log: Path, until: Callable[[], Awaitable[None]]) -> None:
    """`kopf run --standalone --all-namespaces example` against `server` until `await until()` returns; then
    stop it with SIGTERM and check it exits cleanly."""
    kopf = Path(sys.executable).parent / "kopf"
    command = [str(kopf)] if kopf.exists() else [sys.executable, "-m", "kopf"]
    with log.open("wb") as out:
        process = await trio.lowlevel.open_process(
            [*command, "run", "--standalone", "--all-namespaces", "--verbose", str(example)],
            env={"KUBECONFIG": str(server.kubeconfig), "PATH": str(Path(sys.executable).parent)},
            stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        try:
            with trio.fail_after(DEADLINE):
                await until()
            process.send_signal(signal.SIGTERM)
            with trio.fail_after(DEADLINE):
                code = await process.wait()
            assert code == 0, log.read_text()
        except BaseException:
            print(log.read_text())
            raise
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def install_kopf_crd(kubectl: Kubectl, examples: Path) -> None:
    await kubectl("apply", "-f", str(examples / "crd.yaml"))
    await kubectl("wait", "--for=condition=Established", "crd/kopfexamples.kopf.dev", "--timeout=30s")


def kopf_object(examples: Path, name: str) -> bytes:
    """kopf's examples/obj.yaml, under another name when given."""
    obj = yaml.safe_load((examples / "obj.yaml").read_text())
    obj["metadata"]["name"] = name
    return json.dumps(obj).encode()
