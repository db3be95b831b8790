"""The tests' own layout: shared helpers live in `tests/support/` (or are fixtures of a conftest.py).

- No module under tests/ (nor bench/) imports a test module (`tests.<...>.test_*`)
  or a conftest (`tests.conftest`, `tests.<...>.conftest`): what two test
  modules share is a helper, and helpers live in `tests/support/`.
- Every module under tests/ is a test module, a conftest.py, a package's
  `__init__.py`, or a module of `tests/support/`.
- A conftest.py holds fixtures and pytest hooks only (private helpers aside).

Imports are read with `ast` (every `import`, `from ... import`, relative or
not, at any depth: inside functions and `if TYPE_CHECKING:` blocks too).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
SUPPORT = TESTS / "support"


def _modules(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _package_of(path: Path) -> list[str]:
    """The dotted package a module under ROOT belongs to, as parts (`tests/api/x.py` -> tests, api)."""
    return list(path.relative_to(ROOT).parent.parts)


def imported_names(source: str, package: list[str]) -> list[tuple[int, str]]:
    """Every module name `source` imports, with its line: `from a import b` gives both `a` and `a.b`
    (b may be a module); relative imports are resolved against `package`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else list(package)
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names if alias.name != "*")
    return found


def is_test_module(name: str) -> bool:
    """Whether a dotted name is a test module or a conftest of the tests package."""
    parts = name.split(".")
    return parts[0] == "tests" and any(p == "conftest" or p.startswith("test_") for p in parts[1:])


def cross_test_imports(path: Path, source: str | None = None) -> list[str]:
    """`file:line imports name` for each import of a test module or conftest in the module at `path`."""
    text = path.read_text(encoding="utf-8") if source is None else source
    return [f"{path.relative_to(ROOT)}:{line} imports {name}"
            for line, name in imported_names(text, _package_of(path)) if is_test_module(name)]


def misplaced_helpers(paths: list[Path]) -> list[str]:
    """Modules under tests/ that are neither tests, conftests, `__init__.py` nor in tests/support/."""
    return [str(p.relative_to(ROOT)) for p in paths
            if not (p.name.startswith("test_") or p.name in ("conftest.py", "__init__.py")
                    or SUPPORT in p.parents)]


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "fixture" or \
        isinstance(target, ast.Name) and target.id == "fixture"


def conftest_non_fixtures(path: Path, source: str | None = None) -> list[str]:
    """Public top-level names of a conftest.py that are neither fixtures nor pytest hooks."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    wrong: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not (node.name.startswith(("_", "pytest_")) or any(_is_fixture(d) for d in node.decorator_list)):
                wrong.append(node.name)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            wrong.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            wrong.extend(t.id for t in targets if isinstance(t, ast.Name) and not t.id.startswith("_")
                         and t.id not in ("pytest_plugins", "collect_ignore", "collect_ignore_glob"))
    return [f"{path.relative_to(ROOT)}: {name}" for name in wrong]


# ---- the rules ----------------------------------------------------------------------------------

def test_no_module_imports_a_test_module_or_a_conftest():
    found = [hit for path in _modules(TESTS, ROOT / "bench") for hit in cross_test_imports(path)]
    assert found == [], "move what is shared into tests/support/:\n" + "\n".join(found)


def test_shared_helpers_live_in_tests_support():
    assert misplaced_helpers(_modules(TESTS)) == []


def test_conftests_hold_fixtures_and_hooks_only():
    found = [hit for path in _modules(TESTS) if path.name == "conftest.py" for hit in conftest_non_fixtures(path)]
    assert found == [], "helpers belong in tests/support/:\n" + "\n".join(found)


# ---- each rule fails on a planted violation ---------------------------------------------------------

@pytest.mark.parametrize("source", [
    "from tests.api.test_authz import ok\n",
    "from tests.conftest import Server\n",
    "import tests.unit.controller.test_client_http\n",
    "from tests.api import test_authz\n",
    "def f():\n    from tests.e2e.conftest import Kubectl\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tests.unit.storage.conftest import Revs\n",
    "from .conftest import Revs\n",
    "from . import test_sqlite_store\n",
    "from ..api.test_watch import watch\n",
])
def test_a_planted_cross_test_import_is_found(source):
    planted = TESTS / "unit" / "storage" / "test_planted.py"
    assert cross_test_imports(planted, source)


@pytest.mark.parametrize("source", [
    "from tests.support.server import Server, start_server\n",
    "from tests.support import etcd\n",
    "import pytest\nfrom runtime.controller.testing import wait_for_object\n",
    "from .testing_helpers import x\n",  # not a test module: the placement rule catches such helpers
])
def test_imports_of_support_and_libraries_are_fine(source):
    assert cross_test_imports(TESTS / "api" / "test_planted.py", source) == []


def test_a_planted_helper_outside_tests_support_is_found():
    planted = [TESTS / "api" / "support.py", TESTS / "serverproc.py", TESTS / "unit" / "rbac" / "insight_support.py",
               SUPPORT / "server.py", TESTS / "api" / "test_crud.py", TESTS / "e2e" / "conftest.py"]
    assert misplaced_helpers(planted) == ["tests/api/support.py", "tests/serverproc.py",
                                          "tests/unit/rbac/insight_support.py"]


def test_a_planted_helper_in_a_conftest_is_found():
    source = ("import pytest\nKUBECTL = 'kubectl'\n_private = 1\n"
              "class Result:\n    pass\n"
              "async def start_server(nursery):\n    pass\n"
              "def pytest_collection_modifyitems(config, items):\n    pass\n"
              "@pytest.fixture\nasync def server(nursery):\n    pass\n"
              "@pytest.fixture(params=[1, 2])\ndef each(request):\n    return request.param\n")
    assert conftest_non_fixtures(TESTS / "conftest.py", source) == [
        "tests/conftest.py: KUBECTL", "tests/conftest.py: Result", "tests/conftest.py: start_server"]
