"""Fixtures of the crash tests: the store a server process runs on, each in turn."""

from __future__ import annotations

import pytest

from tests.support.etcd import fresh_prefix


@pytest.fixture(params=["sqlite", "etcd"])
def store_args(request: pytest.FixtureRequest) -> list[str]:
    """`miniplane serve` arguments naming the store: SQLite in the data directory, or the session's etcd
    under a fresh prefix (the same for every server the test starts)."""
    if request.param == "sqlite":
        return ["--store", "sqlite"]
    endpoint = request.getfixturevalue("etcd_endpoint")
    return ["--store", f"etcd://{endpoint}", "--etcd-prefix", fresh_prefix()]
