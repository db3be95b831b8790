"""Validation ratcheting over HTTP (Kubernetes 1.33): a CRD made stricter keeps serving objects stored before;
an update that leaves an invalid value unchanged passes (a ratcheted CEL failure comes back as a Warning), one
that changes it to another invalid value is 422. A rule on a changed node is not ratcheted: the rule here
sits on `spec.limits`, and the update changes `spec.note` beside it."""

from __future__ import annotations

import pytest

from tests.support.crds import crd_path, established
from tests.support.server import start_in_process

pytestmark = pytest.mark.stores("memory")

GROUP = "ratchet.example.com"
NAME = f"gadgets.{GROUP}"
PATH = f"/apis/{GROUP}/v1/namespaces/default/gadgets"


def gadgets_crd(strict: bool) -> dict:
    limits: dict = {"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}}
    spec_schema: dict = {"type": "object", "properties": {"name": {"type": "string"}, "note": {"type": "string"},
                                                          "limits": limits}}
    if strict:
        spec_schema["properties"]["name"]["maxLength"] = 5
        limits["x-kubernetes-validations"] = [{"rule": "self.min <= self.max", "message": "min above max"}]
    return {"apiVersion": "apiextensions.svc.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": NAME},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": spec_schema}}}}]}}


async def test_an_update_that_keeps_an_invalid_value_unchanged_passes_with_the_rules_warning(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path, controllers=True)
    async with server.client() as c:
        assert (await c.post(crd_path(), json=gadgets_crd(strict=False))).status_code == 201
        await established(c, NAME)
        body = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g"},
                "spec": {"name": "toolongname", "limits": {"min": 5, "max": 1}}}
        assert (await c.post(PATH, json=body)).status_code == 201
        crd = (await c.get(f"{crd_path()}/{NAME}")).json()
        crd["spec"]["versions"] = gadgets_crd(strict=True)["spec"]["versions"]
        assert (await c.put(f"{crd_path()}/{NAME}", json=crd)).status_code == 200
        refused = await c.post(PATH, json=dict(body, metadata={"name": "h"}))
        assert refused.status_code == 422  # a create is validated in full
        current = (await c.get(f"{PATH}/g")).json()
        current["spec"]["note"] = "unrelated change"
        kept = await c.put(f"{PATH}/g", json=current)
        assert kept.status_code == 200, kept.text
        assert 'spec.limits: Invalid value: \\"object\\": min above max' in kept.headers.get("Warning", "")
        changed = await c.put(f"{PATH}/g", json=dict(kept.json(), spec=dict(kept.json()["spec"], name="stilltoolong")))
        assert changed.status_code == 422
        # maxLength blocks the rules (kube's hasBlockingErr): one error says they were not checked.
        assert [x["field"] for x in changed.json()["details"]["causes"]] == ["spec.name", "<nil>"]
