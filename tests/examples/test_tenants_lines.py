"""The Tenant operator on miniplane's toolkit is shorter than the same operator written for kopf (issue 40).

Lines of code are the lines that are not blank, not comments and not in a
docstring. Print both counts:

    .venv/bin/python -m tests.examples.test_tenants_lines
"""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["TOOLKIT", "KOPF", "code_lines"]

ROOT = Path(__file__).resolve().parents[2]
TOOLKIT, KOPF = ROOT / "examples" / "tenants.py", ROOT / "examples" / "tenants_kopf.py"


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def code_lines(path: Path) -> int:
    """How many lines of `path` are code: not blank, not a comment, not part of a docstring."""
    text = path.read_text()
    docstrings = _docstring_lines(ast.parse(text))
    return sum(1 for number, line in enumerate(text.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#") and number not in docstrings)


def test_code_lines_skip_blanks_comments_and_docstrings(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""Module\n\ndoc."""\n\n# a comment\nimport os\n\n\ndef f():\n    """Doc."""\n'
                      '    return os.sep  # trailing\n')
    assert code_lines(sample) == 3


def test_the_toolkit_tenant_operator_is_shorter_than_the_kopf_one():
    toolkit, kopf = code_lines(TOOLKIT), code_lines(KOPF)
    print(f"examples/tenants.py: {toolkit} lines of code; examples/tenants_kopf.py: {kopf}")
    assert toolkit < kopf


if __name__ == "__main__":
    print(f"examples/tenants.py (miniplane's toolkit): {code_lines(TOOLKIT)} lines of code")
    print(f"examples/tenants_kopf.py (kopf): {code_lines(KOPF)} lines of code")
