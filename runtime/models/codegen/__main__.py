"""`python -m runtime.models.codegen [--source DIR] [--out DIR]`: regenerate `runtime.models.k8s`."""

from __future__ import annotations

import argparse
from pathlib import Path

from runtime.models.codegen import DEFAULT_OUT, DEFAULT_SOURCE, generate

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Parse the options, generate, print the files written."""
    parser = argparse.ArgumentParser(prog="python -m runtime.models.codegen", description=__doc__)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="the OpenAPI v3 documents' folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the generated package's folder")
    args = parser.parse_args(argv)
    for path in generate(args.source, args.out):
        print(path)


if __name__ == "__main__":
    main()
