"""Every name the client, controller runtime and built-in controller modules export exists."""

from __future__ import annotations

import importlib

import pytest

MODULES = ["runtime.client", "runtime.client_local", "runtime.client_http", "runtime.informer",
           "runtime.controller", "runtime.manager", "runtime.finalizers", "runtime.resourceversion",
           "runtime.testing", "runtime.leaderelection", "runtime.models.coordination", "examples.team_rolebindings",
           "controllers.builtin", "controllers.namespace", "controllers.aggregation",
           "controllers.cli", "controllers.gc", "runtime.registry.propagation", "runtime.leaderelection"]


@pytest.mark.parametrize("name", MODULES)
def test_every_exported_name_exists_and_the_module_has_a_contract(name):
    module = importlib.import_module(name)
    assert module.__doc__ and module.__doc__.strip()
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert missing == []
