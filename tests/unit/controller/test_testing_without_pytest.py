"""runtime.controller.testing opens an env without pytest installed (pytest is a test extra, not a dependency)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

PROGRAM = """
import sys
sys.modules["pytest"] = None   # as if pytest were not installed: `import pytest` raises ImportError
import trio
from runtime.controller import testing

async def main():
    async with testing.open_test_env(controllers=False) as env:
        print(type(env).__name__, "miniplane_env" in testing.__all__)

trio.run(main)
"""


def test_the_test_env_imports_and_opens_without_pytest():
    done = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["TestEnv", "False"]
