"""The generator of `runtime.models.k8s`: pydantic models for the built-in kinds, from Kubernetes' OpenAPI.

`python -m runtime.models.codegen` reads the OpenAPI v3 documents
kube-apiserver v1.28 serves (`../shared/kubernetes/openapi-v1.28/v3/` beside
the checkout, else `/work/shared/...`; `--source` to point elsewhere) and writes one module per group-version into
`runtime/models/k8s/` (`--out`), plus the package's `KINDS` table. `plan`
decides what is generated where (and which definitions reuse miniplane's
hand-written models); `render` writes the source by its rules. The output is
deterministic: `tests/unit/models/test_codegen.py` regenerates it into a
temporary folder and compares.
"""

from __future__ import annotations

from pathlib import Path

from runtime.models.codegen.plan import Plan, plan
from runtime.models.codegen.render import MARKER, render_module, render_package

__all__ = ["DEFAULT_SOURCE", "DEFAULT_OUT", "generate", "MARKER"]

_ROOT = Path(__file__).resolve().parents[3]
_DOCUMENTS = Path("kubernetes") / "openapi-v1.28" / "v3"
#: Where the shared data may be: beside this checkout, else the machine's (a clone elsewhere, as CI's).
_SHARED = (_ROOT.parent / "shared", Path("/work/shared"))
#: The OpenAPI v3 documents of Kubernetes v1.28: the first of `_SHARED` that holds them (else the first's path,
#: for the error that says it is missing).
DEFAULT_SOURCE = next((d / _DOCUMENTS for d in _SHARED if (d / _DOCUMENTS).is_dir()), _SHARED[0] / _DOCUMENTS)
#: Where the generated package lives.
DEFAULT_OUT = _ROOT / "runtime" / "models" / "k8s"


def generate(source: Path = DEFAULT_SOURCE, out: Path = DEFAULT_OUT) -> list[Path]:
    """Write the generated package into `out` from the documents in `source`; returns the files written.

    A generated file (one starting with `MARKER`) no longer produced is removed; other files are left alone.
    """
    the_plan: Plan = plan(source)
    out.mkdir(parents=True, exist_ok=True)
    files = {out / "__init__.py": render_package(the_plan)}
    files.update({out / f"{module}.py": render_module(the_plan, module) for module in the_plan.modules})
    for stale in out.glob("*.py"):
        if stale not in files and stale.read_text().startswith(MARKER):
            stale.unlink()
    for path, text in files.items():
        path.write_text(text)
    return sorted(files)
