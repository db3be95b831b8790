"""TypedCache: a model read from an informer's cache shares nothing with the cached object ("change it freely")."""

from __future__ import annotations

from typing import Any

from runtime.client.interface import ObjectKey
from runtime.client.typed import CustomResource, KubeModel, TypedCache


class Free(CustomResource):
    spec: dict[str, Any] = {}
    extra: Any = None


class _Informer:
    """The part of an Informer TypedCache reads: objects it holds (shared, as with LocalClient.shared_reads)."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj

    def get(self, key: Any) -> dict[str, Any]:
        return self.obj

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        return [self.obj]

    def by_index(self, index: str, value: str) -> list[dict[str, Any]]:
        return [self.obj]


def test_changing_a_read_model_leaves_the_cached_object_as_it_was():
    cached = {"apiVersion": "example.com/v1", "kind": "Free", "metadata": {"name": "a"},
              "spec": {"rules": [{"port": 80}]}, "extra": {"nested": ["x"]}}
    cache = TypedCache(_Informer(cached), Free)
    for read in (cache.get(ObjectKey("", "a")), cache.list()[0], cache.by_index("namespace", "")[0]):
        read.spec["rules"][0]["port"] = 8080
        read.spec["rules"].append({"port": 443})
        read.extra["nested"].append("y")
    assert cached["spec"] == {"rules": [{"port": 80}]}
    assert cached["extra"] == {"nested": ["x"]}
    assert issubclass(Free, KubeModel)
