"""Adding a kind means a model and a strategy, nothing else: a throwaway kind served end to end.

Its subresource (`scale`, a Scale of the widget's size) is an object of its own the strategy lists,
as kube-apiserver's ScaleREST: no hook of the strategy takes a subresource name.
"""

from __future__ import annotations

from typing import Any, Optional

import httpx
import pytest
from pydantic import Field

from api.app import ServerState, create_app
from api.authn import Authenticator, TokenFile
from runtime.server.bootstrap import bootstrap
from runtime.machinery.kindinfo import STATUS_VERBS, KindInfo
from runtime.server.kinds import AGE_COLUMN, NAME_COLUMN, Columns, Strategy, ViewSubresource, age, column
from runtime.models.base import K8sModel
from runtime.models.meta import ListMeta, ObjectMeta
from runtime.server.rbac.user import UserInfo
from runtime.server.registry import Registry
from runtime.machinery.scheme import Scheme
from runtime.server.storage import MemoryStore
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid

TOKEN = "widget-admin-token"


class WidgetSpec(K8sModel):
    size: Optional[int] = Field(None, description="How big the widget is.")


class Widget(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None
    spec: Optional[WidgetSpec] = None


class WidgetList(K8sModel):
    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ListMeta] = None
    items: Optional[list[Widget]] = None


def _cells(obj: dict[str, Any]) -> list[Any]:
    return [obj["metadata"]["name"], (obj.get("spec") or {}).get("size"), age(obj["metadata"].get("creationTimestamp"))]


class WidgetScale(ViewSubresource):
    """A widget's size as an autoscaling/v1 Scale."""

    name = "scale"
    kind = ("autoscaling", "v1", "Scale")

    def view(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: obj["metadata"][k] for k in ("name", "namespace", "resourceVersion")}
        return {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": meta,
                "spec": {"replicas": (obj.get("spec") or {}).get("size") or 0}}

    def from_view(self, view: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
        current.setdefault("spec", {})["size"] = (view.get("spec") or {}).get("replicas")
        return current


class WidgetStrategy(Strategy):
    """Sizes are never negative; no collection delete; `kubectl get` shows the size; spec changes count;
    the size is scaled through `scale`."""

    counts_generation = True
    subresources = {"scale": WidgetScale()}

    columns = Columns((NAME_COLUMN, column("Size", "How big", type_="integer"), AGE_COLUMN), _cells)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        size = (obj.get("spec") or {}).get("size")
        return [invalid("spec.size", size, "must be greater than or equal to 0")] if size is not None and size < 0 \
            else []


WIDGET = KindInfo("widgets", "Widget", "widgets", "widget", True, Widget, WidgetList, short_names=("wd",),
                  verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
                  subresources=(("scale", STATUS_VERBS),))
BASE = "/apis/widgets.svc.io/v1/namespaces/default/widgets"


@pytest.fixture
async def widgets(nursery):
    scheme = Scheme()
    scheme.register(WIDGET, WidgetStrategy)
    registry = Registry(MemoryStore(), scheme)
    await nursery.start(registry.run)
    await bootstrap(registry)
    tokens = TokenFile({})
    tokens.add(TOKEN, UserInfo("admin", groups=("system:masters",)))
    app = create_app(ServerState(registry, Authenticator(tokens)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://miniplane",
                                 headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        yield client


async def test_a_registered_kind_is_discovered_stored_validated_and_printed(widgets):
    groups = (await widgets.get("/apis")).json()
    assert "widgets.svc.io" in [g["name"] for g in groups["groups"]]
    resources = (await widgets.get("/apis/widgets.svc.io/v1")).json()["resources"]
    assert [(r["name"], r.get("shortNames"), "deletecollection" in r["verbs"]) for r in resources] == \
        [("widgets", ["wd"], False), ("widgets/scale", None, False)]

    body = {"apiVersion": "widgets.svc.io/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}}
    created = await widgets.post(BASE, json=body)
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["namespace"] == "default"

    bad = await widgets.post(BASE, json=dict(body, metadata={"name": "v"}, spec={"size": -1}))
    assert bad.status_code == 422
    assert bad.json()["details"]["causes"][0]["field"] == "spec.size"

    patched = await widgets.patch(f"{BASE}/w", json={"spec": {"size": 4}},
                                  headers={"Content-Type": "application/merge-patch+json"})
    assert patched.json()["spec"]["size"] == 4 and patched.json()["metadata"]["generation"] == 2

    table = (await widgets.get(BASE, headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"})).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Age"]
    assert table["rows"][0]["cells"][:2] == ["w", 4]

    assert (await widgets.delete(BASE)).status_code == 405  # no collection delete: the kind's facts say so
    assert (await widgets.delete(f"{BASE}/w")).status_code == 200
    assert (await widgets.get(f"{BASE}/w")).status_code == 404


async def test_a_collection_delete_of_namespaces_is_405_as_the_kind_offers_none(widgets):
    answer = await widgets.delete("/api/v1/namespaces")
    assert answer.status_code == 405 and answer.json()["reason"] == "MethodNotAllowed"
    assert (await widgets.get("/api/v1/namespaces/default")).status_code == 200  # nothing was deleted
    core = (await widgets.get("/api/v1")).json()["resources"]
    assert "deletecollection" not in next(r for r in core if r["name"] == "namespaces")["verbs"]


async def test_a_kinds_own_subresource_is_served_by_its_object(widgets):
    body = {"apiVersion": "widgets.svc.io/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}}
    assert (await widgets.post(BASE, json=body)).status_code == 201
    scale = await widgets.get(f"{BASE}/w/scale")
    assert scale.status_code == 200, scale.text
    assert (scale.json()["kind"], scale.json()["spec"]) == ("Scale", {"replicas": 3})
    resources = (await widgets.get("/apis/widgets.svc.io/v1")).json()["resources"]
    assert next(r for r in resources if r["name"] == "widgets/scale")["kind"] == "Scale"

    scaled = await widgets.put(f"{BASE}/w/scale", json={"apiVersion": "autoscaling/v1", "kind": "Scale",
                                                        "metadata": {"name": "w"}, "spec": {"replicas": 5}})
    assert scaled.status_code == 200, scaled.text
    assert scaled.json()["spec"] == {"replicas": 5}
    assert (await widgets.get(f"{BASE}/w")).json()["spec"]["size"] == 5
    refused = await widgets.put(f"{BASE}/w/scale", json={"apiVersion": "autoscaling/v1", "kind": "Scale",
                                                         "metadata": {"name": "w"}, "spec": {"replicas": -1}})
    assert refused.status_code == 422  # the kind's own validation runs on the object the view makes
