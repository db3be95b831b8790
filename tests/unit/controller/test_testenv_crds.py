"""`open_test_env(crds=[...])`, as envtest's `CRDDirectoryPaths`: files and folders of CRDs, created and
Established before the env is yielded; a file that is no CRD is refused naming it, before anything starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from runtime.controller.crdfiles import crd_files, read_crds
from runtime.controller.testing import open_test_env
from runtime.machinery.scheme import ResourceType, Scheme


def crd(plural: str, kind: str, *, group: str = "example.com", domain: str = "svc.io") -> dict[str, Any]:
    return {"apiVersion": f"apiextensions.{domain}/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": {"type": "object",
                                                                   "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


def established(obj: dict[str, Any]) -> bool:
    return any(c["type"] == "Established" and c["status"] == "True" for c in obj["status"]["conditions"])


@pytest.fixture
def crd_folder(tmp_path) -> Path:
    folder = tmp_path / "crds"
    folder.mkdir()
    (folder / "apples.yaml").write_text(yaml.safe_dump(crd("apples", "Apple")))
    (folder / "pears.json").write_text(json.dumps(crd("pears", "Pear")))
    (folder / "README.md").write_text("not a CRD, and not read: only .yaml, .yml and .json are\n")
    return folder


async def test_a_folder_of_two_crds_is_established_when_the_env_is_yielded(crd_folder, autojump_clock):
    async with open_test_env(crds=[crd_folder]) as env:
        assert [c["metadata"]["name"] for c in env.crds] == ["apples.example.com", "pears.example.com"]
        assert all(established(c) for c in env.crds)
        for plural, kind in (("apples", "Apple"), ("pears", "Pear")):  # their kinds are served at once
            made = await env.client.create({"apiVersion": "example.com/v1", "kind": kind,
                                            "metadata": {"name": "one", "namespace": "default"}, "spec": {}})
            assert made["metadata"]["uid"]
            listed = await env.client.list(ResourceType.of("example.com/v1", kind, plural), namespace="default")
            assert [o["metadata"]["name"] for o in listed.items] == ["one"]


def test_a_multi_document_file_gives_each_crd_and_passes_empty_documents_over(tmp_path):
    path = tmp_path / "both.yml"
    path.write_text(yaml.safe_dump(crd("apples", "Apple")) + "---\n---\n" + yaml.safe_dump(crd("pears", "Pear")))
    names = [c["metadata"]["name"] for c in read_crds([path], Scheme("svc.io"))]
    assert names == ["apples.example.com", "pears.example.com"]


def test_a_folder_gives_its_crd_files_sorted_and_not_its_subfolders(crd_folder):
    (crd_folder / "nested").mkdir()
    (crd_folder / "nested" / "more.yaml").write_text(yaml.safe_dump(crd("plums", "Plum")))
    assert [p.name for p in crd_files([crd_folder])] == ["apples.yaml", "pears.json"]


async def test_a_file_that_does_not_parse_is_refused_naming_it(tmp_path):
    (tmp_path / "broken.yaml").write_text("spec: {unclosed\n")
    with pytest.raises(ValueError, match=r"CRD file .*broken\.yaml does not parse"):
        async with open_test_env(crds=[tmp_path]):
            pass


async def test_a_document_that_is_not_a_crd_is_refused_naming_the_file_and_document(tmp_path):
    (tmp_path / "mixed.yaml").write_text(yaml.safe_dump(crd("apples", "Apple")) + "---\n"
                                         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(ValueError, match=r"mixed\.yaml \(document 2\) is a ConfigMap, not a CustomResourceDefinition"):
        async with open_test_env(crds=[tmp_path / "mixed.yaml"]):
            pass


async def test_a_crd_of_another_domain_is_refused_saying_which_the_env_serves(tmp_path):
    (tmp_path / "k8s.yaml").write_text(yaml.safe_dump(crd("apples", "Apple", domain="k8s.io")))
    with pytest.raises(ValueError, match=r"is of apiextensions\.k8s\.io/v1; this env serves apiextensions\.svc\.io/v1"):
        async with open_test_env(crds=[tmp_path / "k8s.yaml"]):
            pass


async def test_the_same_file_loads_in_an_env_of_its_domain(tmp_path, autojump_clock):
    (tmp_path / "k8s.yaml").write_text(yaml.safe_dump(crd("apples", "Apple", domain="k8s.io")))
    async with open_test_env(domain="k8s.io", crds=[tmp_path / "k8s.yaml"]) as env:
        assert established(env.crds[0])


async def test_a_missing_path_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match=r"CRD path .*nowhere: no such file or folder"):
        async with open_test_env(crds=[tmp_path / "nowhere"]):
            pass


async def test_crds_without_the_builtin_controllers_are_refused(crd_folder):
    with pytest.raises(ValueError, match="crds= needs controllers=True"):
        async with open_test_env(crds=[crd_folder], controllers=False):
            pass
