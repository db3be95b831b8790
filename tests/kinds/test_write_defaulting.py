"""Every write's body is defaulted as a create's is (Kubernetes' decoder defaults whatever it decodes): an
update's body and a patch's result get the kind's defaults before validation and the field manager."""

from __future__ import annotations

from typing import Any

from runtime.controller.testing import open_test_env
from runtime.machinery.options import JSON_PATCH
from tests.support.workloads import sample


async def test_an_update_body_and_a_patch_result_are_defaulted_as_a_create_body(autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        services = env.scheme.by_kind("Service")
        pv = env.scheme.by_kind("PersistentVolume")
        svc = await env.client.create(sample("v1", "Service", "web"))
        svc["spec"]["ports"].append({"name": "metrics", "port": 9090})  # no protocol, no targetPort
        updated = await env.client.update(svc)
        assert updated["spec"]["ports"][1] == {"name": "metrics", "port": 9090, "protocol": "TCP", "targetPort": 9090}
        patched = await env.client.patch(services, "web", [{"op": "add", "path": "/spec/ports/-",
                                                            "value": {"name": "admin", "port": 9091}}],
                                         patch_type=JSON_PATCH, namespace="default")
        assert patched["spec"]["ports"][2]["protocol"] == "TCP"
        volume = await env.client.create(sample("v1", "PersistentVolume", "disk"))
        del volume["spec"]["persistentVolumeReclaimPolicy"]
        again = await env.client.update(volume)
        assert again["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        assert again["metadata"]["resourceVersion"] == volume["metadata"]["resourceVersion"]  # defaulted: no change
        assert pv is not None


async def test_an_update_defaults_its_body_once(autojump_clock: Any, monkeypatch: Any) -> None:
    # The registry defaults every write's body; no strategy does it again in prepare_for_update (a Pod's
    # defaulting is a fifth of a millisecond: it was run twice per update).
    from runtime.server.kinds.pods import pod as pod_module

    calls: list[int] = []
    real = pod_module.default_pod
    monkeypatch.setattr(pod_module, "default_pod", lambda obj: calls.append(1) or real(obj))
    async with open_test_env(domain="k8s.io", controllers=False) as env:
        made = await env.client.create(sample("v1", "Pod", "web"))
        calls.clear()
        made["metadata"]["labels"]["tier"] = "front"
        await env.client.update(made)
    assert calls == [1]
