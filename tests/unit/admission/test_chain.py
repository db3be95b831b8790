"""The admission chain (`runtime.server.admission.chain`) and what the registry hands it: kube's plug-in order,
one reinvocation, the built-in plug-ins on main-resource creates and updates only, and each write's facts
(operation, subresource, the action's own kind, options) with warnings and audit annotations answered."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.controller.testing import open_test_env
from runtime.machinery import errors
from runtime.server.admission import AdmissionChain
from runtime.server.kinds import AUDIT_ANNOTATIONS, AdmissionRequest


class Recorder:
    """A step that records what it saw (name, phase, operation, subresource, kind) and may warn or refuse."""

    def __init__(self, name: str, seen: list[tuple], *, warn: str = "", refuse: bool = False,
                 reinvoke_once: bool = False) -> None:
        self.name, self.seen, self.warning, self.refuse, self.reinvoke_once = name, seen, warn, refuse, reinvoke_once

    def _note(self, phase: str, request: AdmissionRequest) -> None:
        self.seen.append((self.name, phase, request.operation, request.subresource, request.kind,
                          bool(request.state.get("reinvoking"))))
        if self.warning:
            request.warn(self.warning)
        request.annotate(f"{self.name}/seen", phase)

    async def mutate(self, request: AdmissionRequest) -> None:
        self._note("mutate", request)
        if self.reinvoke_once and not request.state.get("reinvoking"):
            request.state["reinvoke"] = True

    async def validate(self, request: AdmissionRequest) -> None:
        self._note("validate", request)
        if self.refuse:
            raise errors.Forbidden(f"refused by {self.name}")


def _configmap(name: str = "c") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"a": "1"}}


def _chain(env: Any, *steps: Recorder) -> None:
    env.registry.admission_chain = AdmissionChain(env.registry, mutating=steps, validating=steps)


async def test_the_mutating_steps_run_before_the_validating_ones_in_their_order():
    seen: list[tuple] = []
    async with open_test_env(controllers=False) as env:
        _chain(env, Recorder("a", seen), Recorder("b", seen))
        await env.client.create(_configmap())
    assert [(s[0], s[1]) for s in seen] == [("a", "mutate"), ("b", "mutate"), ("a", "validate"), ("b", "validate")]
    assert {s[2] for s in seen} == {"create"}


async def test_a_step_that_asks_reinvokes_the_mutating_phase_once():
    seen: list[tuple] = []
    async with open_test_env(controllers=False) as env:
        _chain(env, Recorder("a", seen), Recorder("b", seen, reinvoke_once=True))
        await env.client.create(_configmap())
    mutations = [(s[0], s[5]) for s in seen if s[1] == "mutate"]
    assert mutations == [("a", False), ("b", False), ("a", True), ("b", True)]


async def test_a_validating_step_refuses_and_nothing_is_stored():
    seen: list[tuple] = []
    async with open_test_env(controllers=False) as env:
        _chain(env, Recorder("no", seen, refuse=True))
        with pytest.raises(errors.Forbidden, match="refused by no"):
            await env.client.create(_configmap())
        with pytest.raises(errors.NotFound):
            await env.client.get(env.scheme.by_api_version_kind("v1", "ConfigMap"), "c", namespace="default")


async def test_a_delete_runs_both_phases_with_the_delete_options():
    seen: list[tuple] = []
    options: list[Any] = []

    class Options(Recorder):
        async def validate(self, request: AdmissionRequest) -> None:
            options.append(request.options)
            await super().validate(request)
    async with open_test_env(controllers=False) as env:
        await env.client.create(_configmap())
        _chain(env, Options("d", seen))
        await env.client.delete(env.scheme.by_api_version_kind("v1", "ConfigMap"), "c", namespace="default")
    assert [(s[1], s[2]) for s in seen] == [("mutate", "delete"), ("validate", "delete")]
    assert options[0].dry_run is False and hasattr(options[0], "propagation_policy")


async def test_a_status_write_names_its_subresource():
    seen: list[tuple] = []
    async with open_test_env(controllers=False) as env:
        ns = env.scheme.namespace_type
        _chain(env, Recorder("s", seen))
        namespace = await env.client.get(ns, "default")
        await env.client.update(namespace, subresource="status")
    assert {(s[2], s[3]) for s in seen} == {("update", "status")}


async def test_an_action_subresource_is_admitted_as_a_create_of_its_own_kind():
    seen: list[tuple] = []
    async with open_test_env(controllers=False) as env:
        await env.client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                 "metadata": {"name": "robot", "namespace": "default"}})
        _chain(env, Recorder("t", seen))
        await env.registry.create(
            env.client.user, env.scheme.by_api_version_kind("v1", "ServiceAccount"), "default",
            _body({"apiVersion": f"authentication.{env.scheme.domain}/v1", "kind": "TokenRequest", "spec": {}}),
            name="robot", subresource="token")
    (mutated, validated) = seen
    assert mutated[2:5] == ("create", "token", (f"authentication.{env.scheme.domain}", "v1", "TokenRequest"))
    assert validated[1] == "validate"


async def test_warnings_reach_the_answer_and_annotations_the_audit_event():
    seen: list[tuple] = []
    sink: dict[str, str] = {}
    async with open_test_env(controllers=False) as env:
        _chain(env, Recorder("w", seen, warn="careful"))
        AUDIT_ANNOTATIONS.set(sink)
        result = await env.registry.create(env.client.user, env.scheme.by_api_version_kind("v1", "ConfigMap"),
                                           "default", _body(_configmap()))
    assert result.warnings.count("careful") == 1  # said twice (both phases), answered once
    assert sink == {"w/seen": "mutate"}  # the first value of a key stands


def _body(obj: dict[str, Any]) -> Any:
    from runtime.machinery.options import Body
    return Body(obj)
