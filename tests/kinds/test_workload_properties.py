"""Properties every workload kind holds (issue 38's acceptance): defaulting is idempotent (an object defaulted
twice equals it defaulted once), and an object read back and sent again unchanged is a no-op (the same
resourceVersion, nothing written), on every kind's sample and on hypothesis' variations of it (names, labels,
replicas, images, containers, ports).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from runtime.controller.testing import open_test_env
from runtime.machinery.options import Body
from runtime.machinery.scheme import Scheme
from tests.support.workloads import SAMPLE_KINDS, sample

SCHEME = Scheme("k8s.io")
_NAMES = st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
_IMAGES = st.sampled_from(["nginx", "nginx:latest", "nginx:1.25", "registry.example.com:5000/team/app@sha256:"
                           + "a" * 64, "busybox:1.36"])


def _rt(api_version: str, kind: str) -> Any:
    rt = SCHEME.by_api_version_kind(api_version, kind)
    assert rt is not None, (api_version, kind)
    return rt


def _templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod specs inside an object: a Pod's own, a template's, a CronJob's job template's."""
    spec = obj.get("spec") or {}
    found = [spec] if obj["kind"] == "Pod" else []
    for holder in (spec, (spec.get("jobTemplate") or {}).get("spec") or {}):
        template = holder.get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            found.append(template["spec"])
    return found


@st.composite
def _objects(draw: st.DrawFn) -> dict[str, Any]:
    api_version, kind = draw(st.sampled_from(SAMPLE_KINDS))
    obj = sample(api_version, kind, draw(_NAMES), "default")
    for pod_spec in _templates(obj):
        first = pod_spec["containers"][0]
        first["image"] = draw(_IMAGES)
        for i in range(draw(st.integers(0, 2))):
            pod_spec["containers"].append({"name": f"side{i}", "image": draw(_IMAGES),
                                           "ports": [{"containerPort": 9000 + i, "name": f"p{i}"}]})
    if isinstance((obj.get("spec") or {}).get("replicas"), int):
        obj["spec"]["replicas"] = draw(st.integers(0, 50))
    obj["metadata"]["labels"] = {**(obj["metadata"].get("labels") or {}),
                                 **draw(st.dictionaries(_NAMES, _NAMES, max_size=3))}
    return obj


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_objects())
def test_defaulting_twice_equals_defaulting_once(obj: dict[str, Any]) -> None:
    rt = _rt(obj["apiVersion"], obj["kind"])
    decoded, _ = rt.strategy.decode(Body(obj), "Strict")
    rt.strategy.default(decoded)
    once = copy.deepcopy(decoded)
    rt.strategy.default(decoded)
    assert decoded == once


@pytest.mark.parametrize(("api_version", "kind"), SAMPLE_KINDS, ids=[f"{v}/{k}" for v, k in SAMPLE_KINDS])
async def test_a_sample_is_valid_and_sent_back_unchanged_is_a_no_op(api_version: str, kind: str,
                                                                    autojump_clock: Any) -> None:
    async with open_test_env(domain="k8s.io") as env:
        created = await env.client.create(sample(api_version, kind))
        assert created["metadata"]["resourceVersion"]
        read = await env.client.get(_rt(api_version, kind), created["metadata"]["name"],
                                    namespace=created["metadata"].get("namespace", ""))
        again = await env.client.update(copy.deepcopy(read))
        assert again["metadata"]["resourceVersion"] == read["metadata"]["resourceVersion"]
        assert again == read


async def test_varied_objects_sent_back_unchanged_are_no_ops(autojump_clock: Any) -> None:
    examples: list[dict[str, Any]] = []

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(_objects())
    def collect(obj: dict[str, Any]) -> None:
        examples.append(obj)

    collect()
    # A quota or limit range constrains what is created after it in its namespace (a drawn quota of
    # requests.cpu refuses a later pod without requests: 403, rightly): created last, they judge nothing here.
    examples.sort(key=lambda o: o["kind"] in ("ResourceQuota", "LimitRange"))
    async with open_test_env(domain="k8s.io") as env:
        for i, obj in enumerate(examples):
            obj["metadata"]["name"] = f"{obj['metadata']['name'][:40]}-{i}"
            created = await env.client.create(obj)
            again = await env.client.update(copy.deepcopy(created))
            assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"], obj
