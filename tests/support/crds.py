"""Custom resources for tests: a `Widget` CRD with every feature the issue names, objects of it, and waits.

Contract: `widget_crd(domain, **spec_changes)` is the CRD body
(`widgets.stable.example.com`, namespaced, short name `wd`, categories
`all` and `gadgets`, status and scale subresources, printer columns Size
and Color, selectable field `spec.color`, a CEL rule `size must not exceed
maxSize`, a defaulted `maxSize`, a list-map `ports`); `widget(name, **spec)`
an object of it. `crd_path(domain)` is the CRDs' collection URL path.
`watch_crd(client, until, name, domain)` lists, then watches one CRD over an
httpx client until `until(obj)` holds (obj None while absent) and returns it
(10 s bound, no polling); `established(...)` waits for `Established`. `load_manifest(path)`
reads a YAML manifest of the repository (one document).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import httpx
import trio
import yaml

__all__ = ["GROUP", "WIDGET_SCHEMA", "REPO", "widget_crd", "widget", "crd_path", "widgets_path", "watch_crd",
           "established", "load_manifest"]

GROUP = "stable.example.com"
REPO = Path(__file__).resolve().parents[2]

WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A widget: something of a size and a colour.",
    "properties": {
        "spec": {
            "type": "object",
            "description": "What the widget should be.",
            "required": ["size"],
            "x-kubernetes-validations": [
                {"rule": "self.size <= self.maxSize", "message": "size must not exceed maxSize"}],
            "properties": {
                "size": {"type": "integer", "minimum": 0, "description": "How big the widget is."},
                "maxSize": {"type": "integer", "default": 10},
                "color": {"type": "string", "enum": ["red", "blue"]},
                "replicas": {"type": "integer"},
                "selector": {"type": "string"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "required": ["name"],
                                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}, "replicas": {"type": "integer"}}},
    },
}


def crd_path(domain: str = "svc.io") -> str:
    return f"/apis/apiextensions.{domain}/v1/customresourcedefinitions"


def widgets_path(namespace: str = "default", version: str = "v1") -> str:
    return f"/apis/{GROUP}/{version}/namespaces/{namespace}/widgets"


def widget_crd(domain: str = "svc.io", **spec_changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": f"apiextensions.{domain}/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"],
                      "categories": ["all", "gadgets"]},
            "versions": [{
                "name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": WIDGET_SCHEMA},
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                         "statusReplicasPath": ".status.replicas",
                                                         "labelSelectorPath": ".spec.selector"}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                                             {"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
                "selectableFields": [{"jsonPath": ".spec.color"}],
            }],
        },
    }
    body["spec"].update(spec_changes)
    return body


def widget(name: str, namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 1, **spec}}


async def watch_crd(client: httpx.AsyncClient, until: Callable[[dict[str, Any] | None], bool],
                    name: str = f"widgets.{GROUP}", domain: str = "svc.io") -> dict[str, Any] | None:
    """List, then watch the CRD until `until(obj)` holds (obj None while absent); bounded, no polling."""
    with trio.fail_after(10):
        selector = f"metadata.name={name}"
        listed = (await client.get(crd_path(domain), params={"fieldSelector": selector})).json()
        current = listed["items"][0] if listed["items"] else None
        if until(current):
            return current
        params = {"watch": "1", "fieldSelector": selector, "resourceVersion": listed["metadata"]["resourceVersion"]}
        async with client.stream("GET", crd_path(domain), params=params) as events:
            async for line in events.aiter_lines():
                event = json.loads(line)
                obj = None if event["type"] == "DELETED" else event["object"]
                if until(obj):
                    return obj
    raise AssertionError("the watch ended first")


async def established(client: httpx.AsyncClient, name: str = f"widgets.{GROUP}",
                      domain: str = "svc.io") -> dict[str, Any]:
    """The CRD once Established (its kind is then served)."""
    found = await watch_crd(client, lambda o: o is not None and any(
        x["type"] == "Established" and x["status"] == "True"
        for x in (o.get("status") or {}).get("conditions") or []), name, domain)
    assert found is not None
    return found


def load_manifest(path: str | Path) -> dict[str, Any]:
    """One YAML document of the repository (a path relative to its root, or absolute)."""
    return yaml.safe_load((REPO / path).read_text(encoding="utf-8"))
