"""The insight package's surface: exports, frozen results with JSON forms, small modules, purity."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

import runtime.server.rbac.insight as insight
from runtime.models.insight import InsightValue
from runtime.server.rbac import RBACIndex, PolicySource, aggregate_rules, resource_attributes
from runtime.server.rbac.insight import access_matrix
from runtime.server.rbac.insight import diff
from runtime.server.rbac.insight import explain
from runtime.server.rbac.insight import lint
from runtime.server.rbac.insight import who_can
from tests.support.rbac_objects import (
    ALICE, RBAC, cluster_role, cluster_scoped, crb, index, rb, role, rule, user,
)

PACKAGE = Path(insight.__file__).parent
#: Modules of the insight package and of the rbac package that a glob of each must find (it finds more later).
INSIGHT_MODULES = {"__init__", "aggregate", "blockers", "checks", "diff", "explain", "graph", "lint", "matrix",
                   "near_miss", "refs", "risk", "who_can"}
RBAC_MODULES = {"__init__", "aggregation", "attributes", "authorizer", "bootstrap", "describe", "escalation",
                "index", "resolver", "rules", "rules_review", "source", "subjects", "user"}


def test_exports_exist_and_the_contract_is_written():
    assert {"access_matrix", "diff", "explain", "lint", "who_can"} <= set(insight.__all__)
    for name in insight.__all__:
        assert hasattr(insight, name), name
    assert "Contract" in insight.__doc__


def test_no_module_is_over_600_lines_and_each_states_its_contract():
    paths = [*PACKAGE.glob("*.py"), *PACKAGE.parent.glob("*.py")]
    assert INSIGHT_MODULES | RBAC_MODULES <= {path.stem for path in paths}
    for path in paths:
        text = path.read_text()
        assert len(text.splitlines()) <= 600, path.name
        assert ast.get_docstring(ast.parse(text)), path.name


def test_insight_does_no_io_and_imports_only_runtime_and_the_standard_library():
    banned = {"os", "io", "pathlib", "socket", "trio", "httpx", "sqlite3", "api", "controllers"}
    paths = list(PACKAGE.glob("*.py"))
    assert INSIGHT_MODULES <= {path.stem for path in paths}
    for path in paths:
        imports = [node for node in ast.walk(ast.parse(path.read_text()))
                   if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert imports, path.name  # every module imports something: the walk reads its imports
        for node in imports:
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module.split(".")[0] not in banned, (path.name, node.module)
            elif isinstance(node, ast.Import):
                assert not {a.name.split(".")[0] for a in node.names} & banned, path.name


def test_rbac_index_is_a_policy_source_listing_everything_sorted():
    source = index(rb("b", "x", "r", []), rb("a", "y", "r", []), cluster_role("z"),
                   cluster_role("c"), role("b", "r"), role("a", "r"), crb("k", "c", []))
    assert isinstance(source, PolicySource)
    assert [r["metadata"]["name"] for r in source.list_cluster_roles()] == ["c", "z"]
    assert [r["metadata"]["namespace"] for r in source.list_roles()] == ["a", "b"]
    assert [b["metadata"]["namespace"] for b in source.list_role_bindings()] == ["a", "b"]
    assert len(source.list_cluster_role_bindings()) == 1


def test_aggregate_rules_lives_in_runtime_and_the_controller_re_exports_it():
    import controllers.aggregation
    assert controllers.aggregation.aggregate_rules is aggregate_rules


def _results():
    source = index(cluster_role("r", [rule(["get"], ["roles"], [RBAC])]),
                   crb("b", "r", [user("alice")]), rb("team-a", "gone", "x", [user("alice")]))
    return [explain(resource_attributes(ALICE, "list", "roles", api_group=RBAC, namespace="team-a"),
                    source, cluster_scoped=cluster_scoped),
            *who_can("get", "roles", group=RBAC, source=source),
            access_matrix(ALICE, "", [(RBAC, "roles")], source),
            *diff(RBACIndex(), source), *lint(source, {"default"})]


def test_results_are_the_insight_kinds_frozen_status_models_with_a_json_form():
    results = _results()
    assert len(results) >= 5, results
    for result in results:
        assert isinstance(result, InsightValue), type(result).__name__
        with pytest.raises(ValidationError):
            setattr(result, next(iter(type(result).model_fields)), None)
        json.dumps(result.to_dict())
