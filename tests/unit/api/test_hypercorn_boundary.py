"""Hypercorn's internals are touched in one module (`api.serving.hypercorn_internals`, its caveats at the
top): every other module of the project imports at most Hypercorn's documented API (`hypercorn.config`, and
`hypercorn.trio`'s `serve`)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
THE_MODULE = Path("api/serving/hypercorn_internals.py")
DOCUMENTED = ("hypercorn.config", "hypercorn.trio")


def hypercorn_internals_imported(source: str) -> list[str]:
    """The Hypercorn modules `source` imports beyond the `DOCUMENTED` ones."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        found += [n for n in names if n.split(".")[0] == "hypercorn" and n not in DOCUMENTED]
    return found


def test_the_rule_fails_on_a_planted_import():
    assert hypercorn_internals_imported("from hypercorn.trio.tcp_server import TCPServer\n") \
        == ["hypercorn.trio.tcp_server"]
    assert hypercorn_internals_imported("import hypercorn.utils\n") == ["hypercorn.utils"]
    assert hypercorn_internals_imported("from hypercorn.config import Config\n") == []
    assert hypercorn_internals_imported("from hypercorn.trio import serve\n") == []


def test_only_one_module_of_the_server_touches_hypercorn_internals():
    sources = [p for package in ("runtime", "api", "controllers") for p in (ROOT / package).rglob("*.py")]
    assert len(sources) > 100
    offenders = {str(p.relative_to(ROOT)): found for p in sources if p.relative_to(ROOT) != THE_MODULE
                 for found in [hypercorn_internals_imported(p.read_text())] if found}
    assert offenders == {}
    assert hypercorn_internals_imported((ROOT / THE_MODULE).read_text())  # the one that does
