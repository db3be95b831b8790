"""CustomResourceDefinitions from files and folders, as envtest's `CRDDirectoryPaths` reads them.

`read_crds(paths, scheme)` returns the CRDs of `paths`, in order: a file is
read whole (YAML, every document of it; `.json` as JSON), a folder gives
its `*.yaml`, `*.yml` and `*.json` files, sorted by name (not its
subfolders, as envtest). Empty YAML documents are passed over.

Raises ValueError naming the file for a path that does not exist, a file
that does not parse, or a document that is not a CustomResourceDefinition
of `scheme`'s API group (`apiextensions.svc.io/v1` under the default domain;
a manifest written for a cluster, `apiextensions.k8s.io/v1`, needs an env
of domain `k8s.io`). envtest passes over documents that are no CRD and, by
default, paths that do not exist; here both are refused, since a mistyped
path or a stray manifest would otherwise test nothing, silently. Pure: no server is asked (`runtime.controller.testing`
creates them and waits until they are Established).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

import yaml

from runtime.machinery.scheme import Scheme

__all__ = ["read_crds", "crd_files", "CRD_SUFFIXES"]

#: The files of a folder that are read (envtest's are .json, .yaml and .yml too).
CRD_SUFFIXES = (".yaml", ".yml", ".json")


def crd_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The files `paths` name: each file, and each folder's CRD_SUFFIXES files sorted by name.

    Raises ValueError for a path that does not exist.
    """
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.is_file() and p.suffix in CRD_SUFFIXES)
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"CRD path {path}: no such file or folder")
    return files


def _documents(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            return [json.loads(text)]
        return [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        raise ValueError(f"CRD file {path} does not parse: {exc}") from exc


def read_crds(paths: Iterable[str | os.PathLike[str]], scheme: Scheme) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition of `paths` (see the module doc); raises ValueError naming the file."""
    crd = scheme.by_kind("CustomResourceDefinition")
    api_version = f"{crd.group}/{crd.version}"
    found = []
    for path in crd_files(paths):
        for index, doc in enumerate(_documents(path)):
            what = f"CRD file {path} (document {index + 1})"
            if not isinstance(doc, dict):
                raise ValueError(f"{what} is not an object")
            if doc.get("kind") != crd.kind:
                raise ValueError(f"{what} is a {doc.get('kind') or 'document without a kind'}, "
                                 f"not a {crd.kind}")
            if doc.get("apiVersion") != api_version:
                raise ValueError(f"{what} is of {doc.get('apiVersion')}; this env serves {api_version} "
                                 f"(an env of domain k8s.io serves apiextensions.k8s.io/v1)")
            if not (doc.get("metadata") or {}).get("name"):
                raise ValueError(f"{what} has no metadata.name")
            found.append(doc)
    return found
