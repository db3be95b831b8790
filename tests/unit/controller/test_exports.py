"""Every module of runtime/, api/, controllers/ and examples/ has a contract docstring, and its `__all__` exists;
`runtime.controller.__all__` is the controller author's whole surface (one import)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import runtime.controller as ctrl
from runtime.client import interface
from runtime.machinery import errors

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


#: What a controller's author reaches for (issue 40: one import, as controller-runtime's `ctrl`).
AUTHOR_SURFACE = {
    "manager": ["Manager", "LeaderElectionConfig", "CachedClient", "HealthChecks", "probes_app", "serve_probes"],
    "keys and results": ["ObjectKey", "key_of", "Result", "TerminalError", "Reconciler"],
    "errors": ["StatusError", "NotFound", "Conflict", "AlreadyExists", "Invalid", "Forbidden", "ClientError",
               "ignore_not_found", "ignore_conflict"],
    "kinds": ["ResourceType", "Client"],
    "predicates": ["Predicate", "generation_changed", "labels_changed", "annotations_changed", "all_of", "any_of"],
    "handlers": ["MapFunc", "enqueue_object", "enqueue_owner", "Source"],
    "helpers": ["create_or_update", "create_or_patch", "set_controller_reference", "set_owner_reference",
                "Condition", "set_status_condition", "find_status_condition", "is_status_condition_true",
                "ensure_finalizer", "remove_finalizer", "handle_finalizer"],
}


@pytest.mark.parametrize("group", sorted(AUTHOR_SURFACE))
def test_the_controller_package_exports_the_authors_surface_in_one_all(group):
    assert [n for n in AUTHOR_SURFACE[group] if n not in ctrl.__all__] == []
    assert len(ctrl.__all__) == len(set(ctrl.__all__))
    # The same objects as where they are defined: one class per error, one key type.
    assert ctrl.NotFound is errors.NotFound and ctrl.Conflict is errors.Conflict
    assert ctrl.ObjectKey is interface.ObjectKey and ctrl.ignore_not_found is interface.ignore_not_found
