"""What a fresh interpreter loads: the module counts the layout and fast-start tests check (issues 36, 40).

Contract: `loaded_by(module)` imports `module` in a new `python` (cwd: the
repository) and returns every module then in `sys.modules`; `server_code` and
`project_modules` pick the server's and the project's out of such a list.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

__all__ = ["PACKAGES", "SERVER_CODE", "COMMAND_LINE", "loaded_by", "server_code", "project_modules"]

ROOT = Path(__file__).resolve().parents[2]
#: The project's packages.
PACKAGES = ("runtime", "api", "controllers")
#: What only the server needs: its packages, and the libraries of its strategies, CEL, tokens and serving.
SERVER_CODE = ("runtime.server", "api", "controllers", "celpy", "jwt", "re2", "cryptography", "quart", "quart_trio",
               "hypercorn", "sqlite3")
#: The command line's modules under SERVER_CODE's names: they parse the flags (`serve`'s, `controllers`'), and
#: load no server.
COMMAND_LINE = ["api", "api.cli", "api.serveoptions", "controllers", "controllers.cli", "runtime.server",
                "runtime.server.featuregates"]


def loaded_by(module: str) -> list[str]:
    """Every module a fresh interpreter has loaded once it imported `module`."""
    script = textwrap.dedent(f"""
        import sys
        import {module}
        print("\\n".join(sorted(sys.modules)))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def server_code(loaded: list[str]) -> list[str]:
    """The modules of `loaded` that are server code (SERVER_CODE and what is inside it)."""
    return [m for m in loaded if any(m == s or m.startswith(s + ".") for s in SERVER_CODE)]


def project_modules(loaded: list[str]) -> list[str]:
    """The project's own modules of `loaded`: the generated protobuf package aside, as every rule here."""
    return [m for m in loaded if m.split(".")[0] in PACKAGES and "proto" not in m.split(".")]
