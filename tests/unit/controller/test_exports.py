"""Every module of runtime/, api/, controllers/ and examples/ has a contract docstring, and its `__all__` exists."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for folder in ("runtime", "api", "controllers", "examples") for p in (ROOT / folder).rglob("*.py")
    if "proto" not in p.parts)


@pytest.mark.parametrize("name", MODULES)
def test_every_exported_name_exists_and_the_module_has_a_contract(name):
    module = importlib.import_module(name)
    assert module.__doc__ and module.__doc__.strip()
    missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
    assert missing == []
