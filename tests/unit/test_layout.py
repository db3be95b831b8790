"""The architecture's rules: runtime/ imports neither api/ nor controllers/; packages state their contract."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_runtime_imports_neither_api_nor_controllers():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "runtime").rglob("*.py")
                 if _imports(p) & {"api", "controllers"}]
    assert offenders == []


def test_controllers_never_import_api():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "controllers").rglob("*.py")
                 if "api" in _imports(p)]
    assert offenders == []


def test_every_package_has_a_contract_docstring_and_exports():
    for init in list((ROOT / "runtime").rglob("__init__.py")) + [ROOT / "api" / "__init__.py"]:
        if "proto" in init.parts:
            continue
        module = ".".join(init.relative_to(ROOT).parts[:-1])
        mod = importlib.import_module(module)
        assert (mod.__doc__ or "").strip(), f"{module} has no contract docstring"
