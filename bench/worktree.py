"""`before_tree(rev, where)`: the code before, as a git worktree beside this checkout, for one benchmark run.

Contract: a context manager that adds a detached worktree of `rev` at `where`, compiles the project's
packages of both trees (`compileall`: this machine sets PYTHONDONTWRITEBYTECODE, so a start would otherwise
compile every module, about a second), yields `where`, and removes the worktree at the end, also on
failure.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["before_tree", "PACKAGES"]

ROOT = Path(__file__).resolve().parents[1]
#: The project's packages, compiled in both trees.
PACKAGES = ("api", "runtime", "controllers")


@contextmanager
def before_tree(rev: str, where: Path) -> Iterator[Path]:
    """A compiled git worktree of `rev` at `where`, this checkout compiled too (see the module doc)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), rev], check=True)
    try:
        for tree in (where, ROOT):
            subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(tree / p) for p in PACKAGES)],
                           check=True)
        yield where
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False)
