"""The bootstrap policy is parsed once per text and domain (every server and test env start reads it; PyYAML
takes tens of milliseconds over it), and each caller gets objects of its own."""

from __future__ import annotations

import yaml

from runtime.server.rbac import load_bootstrap_policy


def test_the_bootstrap_policy_is_parsed_once_and_handed_out_as_copies(monkeypatch) -> None:
    first = load_bootstrap_policy("cache-test.io")
    calls = []
    real = yaml.safe_load_all
    monkeypatch.setattr(yaml, "safe_load_all", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = load_bootstrap_policy("cache-test.io")
    assert calls == [] and again == first
    again[0]["metadata"]["name"] = "changed"
    assert load_bootstrap_policy("cache-test.io")[0]["metadata"]["name"] == first[0]["metadata"]["name"]
