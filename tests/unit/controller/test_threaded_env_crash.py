"""threaded_test_env: an env that crashes while the block runs raises its own error when the block ends."""

from __future__ import annotations

import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, AsyncIterator

import pytest
import trio

from runtime.controller import testing


def test_an_env_crashing_while_the_block_runs_raises_its_own_error_at_the_end(monkeypatch):
    @asynccontextmanager
    async def crashing_env(**options: Any) -> AsyncIterator[Any]:
        async def crash() -> None:
            await trio.sleep(0.01)
            raise ValueError("the registry crashed")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(crash)
            yield SimpleNamespace(url="https://127.0.0.1:1", kubeconfig=Path("k"), ca_pem=b"ca", token="t",
                                  crds=[])

    monkeypatch.setattr(testing, "open_test_env", crashing_env)
    with pytest.raises(BaseException) as raised:
        with testing.threaded_test_env():
            time.sleep(0.3)  # the env's trio run ends meanwhile
    assert "the registry crashed" in repr(raised.value) + repr(getattr(raised.value, "exceptions", ""))
    assert not isinstance(raised.value, trio.RunFinishedError)


def test_an_env_that_does_not_start_in_time_is_cancelled_and_its_thread_joined(monkeypatch):
    @asynccontextmanager
    async def hanging_env(**options: Any) -> AsyncIterator[Any]:
        await trio.sleep_forever()  # never serves
        yield None

    monkeypatch.setattr(testing, "open_test_env", hanging_env)
    monkeypatch.setattr(testing, "THREAD_SECONDS", 0.2)
    with pytest.raises(RuntimeError, match="did not start within 0.2 s"):
        with testing.threaded_test_env():
            pass
    assert not [t for t in threading.enumerate() if t.name == "miniplane-test-env"]
