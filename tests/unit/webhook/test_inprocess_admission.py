"""Python webhooks in process (`runtime.server.admission.python`): each of kube's webhook dispatch rules, on
a test env's registry (`open_test_env(admission=[...])`), with the example webhooks where they serve."""

from __future__ import annotations

import pytest
import trio

from runtime.controller.testing import ADMIN, open_test_env
from runtime.machinery import errors
from runtime.machinery.options import Body, ParsedDeleteOptions, WriteOptions
from runtime.server.admission.webhooks.review import denial
from runtime.server.kinds import AdmissionRequest
from runtime.server.registry import AdmissionPlugin
from runtime.webhook import Allowed, Denied, Patch, Request, Rule, Webhook
from tests.support.python_admission import (
    DENY_LABELLED, DENY_MESSAGE, STAMP, STAMP_WEBHOOK, WARNING, WEBHOOKS, configmap,
)

EVERYTHING = Rule(["configmaps"], operations=["*"])  # the test's writes, not the bootstrap's


def _recording(name: str = "record.example.com", **kw) -> tuple[Webhook, list[Request]]:
    seen: list[Request] = []

    async def record(request: Request) -> Allowed:
        seen.append(request)
        return Allowed()

    return Webhook(name, record, rules=kw.pop("rules", [EVERYTHING]), **kw), seen


async def _create(env, obj, **opts):
    rt = env.registry.scheme.by_api_version_kind(obj["apiVersion"], obj["kind"])
    return await env.registry.create(ADMIN, rt, obj["metadata"].get("namespace", ""), Body(obj), WriteOptions(**opts))


async def test_a_denial_is_kubes_words_with_its_code():
    async with open_test_env(controllers=False, admission=WEBHOOKS) as env:
        with pytest.raises(errors.StatusError) as caught:
            await env.client.create(configmap(labels={"deny": "now"}))
    assert caught.value.code == 403 and caught.value.reason == "Forbidden"
    assert caught.value.message == (f'admission webhook "{DENY_LABELLED.name}" denied the request: '
                                    f'{DENY_MESSAGE.format("now")}')


def test_a_denial_below_400_is_400_and_without_message_says_so():
    err = denial("a.example.com", {"code": 200})
    assert (err.code, err.message) == (400, 'admission webhook "a.example.com" denied the request without explanation')
    assert denial("a.example.com", {"code": 409, "reason": "Taken"}).message == \
        'admission webhook "a.example.com" denied the request: Taken'


async def test_a_mutating_webhooks_patch_is_stored():
    async with open_test_env(controllers=False, admission=WEBHOOKS) as env:
        created = await env.client.create(configmap(labels={"a": "b"}))
    assert created["metadata"]["labels"] == {"a": "b", STAMP[0]: STAMP[1]}


async def test_warnings_reach_the_answer():
    async with open_test_env(controllers=False, admission=WEBHOOKS) as env:
        result = await _create(env, configmap(data={"warn": "1"}))
    assert WARNING in result.warnings


async def test_mutating_webhooks_run_before_validation_and_validating_ones_after():
    order: list[str] = []

    async def mutate(request: Request) -> Allowed:
        order.append("mutating")
        return Allowed()

    async def check(request: Request) -> Allowed:
        order.append(f"validating saw {request.object.metadata.labels}")
        return Allowed()

    def plugin(request) -> None:
        if request.resource.plural == "configmaps":  # not the bootstrap's writes
            order.append("plugin")

    hooks = [Webhook("v.example.com", check, rules=[Rule(["configmaps"])]),
             Webhook("m.example.com", mutate, rules=[Rule(["configmaps"])], mutating=True), STAMP_WEBHOOK]
    async with open_test_env(controllers=False, admission=[AdmissionPlugin("p", plugin), *hooks]) as env:
        await env.client.create(configmap())
    assert order == ["mutating", "plugin", f"validating saw {{'{STAMP[0]}': '{STAMP[1]}'}}"]


async def test_a_webhook_sees_the_request_kube_would_send():
    hook, seen = _recording()
    async with open_test_env(controllers=False, admission=[hook]) as env:
        await _create(env, configmap(), dry_run=True, field_manager="me")
    [request] = seen
    assert (request.operation, request.name, request.namespace, request.dry_run) == ("CREATE", "c", "default", True)
    assert request.kind == ("", "v1", "ConfigMap") and request.resource == ("", "v1", "configmaps")
    assert request.user_info.username == "admin" and "system:masters" in request.user_info.groups
    assert request.options == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"],
                               "fieldManager": "me", "fieldValidation": "Warn"}
    assert request.uid and request.raw_old_object is None


async def test_a_delete_sends_no_object_and_the_old_one():
    hook, seen = _recording(rules=[Rule(["configmaps"], operations=["DELETE"])])
    async with open_test_env(controllers=False, admission=[hook]) as env:
        await env.client.create(configmap())
        rt = env.registry.scheme.by_api_version_kind("v1", "ConfigMap")
        await env.registry.delete(ADMIN, rt, "default", "c", ParsedDeleteOptions())
    [request] = seen
    assert request.operation == "DELETE" and request.object is None and request.old_object.metadata.name == "c"


async def test_an_update_sends_the_old_object():
    hook, seen = _recording(rules=[Rule(["configmaps"], operations=["UPDATE"])])
    async with open_test_env(controllers=False, admission=[hook]) as env:
        created = await env.client.create(configmap(data={"k": "1"}))
        created["data"] = {"k": "2"}
        await env.client.update(created)
    [request] = seen
    assert request.old_object.data == {"k": "1"} and request.object.data == {"k": "2"}


async def test_a_webhook_sees_only_what_its_rules_match():
    hook, seen = _recording(rules=[Rule(["secrets"], operations=["CREATE"], api_groups=[""])])
    async with open_test_env(controllers=False, admission=[hook]) as env:
        await env.client.create(configmap())
        await env.client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s",
                                                                                 "namespace": "default"}})
    assert [r.kind.kind for r in seen] == ["Secret"]


async def test_a_subresource_is_matched_by_its_own_rule():
    hook, seen = _recording(rules=[Rule(["serviceaccounts/token"], operations=["CREATE"])])
    async with open_test_env(domain="k8s.io", controllers=False, admission=[hook]) as env:
        await env.client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                 "metadata": {"name": "sa", "namespace": "default"}})
        assert seen == []
        rt = env.registry.scheme.by_api_version_kind("v1", "ServiceAccount")
        await env.registry.create(ADMIN, rt, "default", Body({"apiVersion": "authentication.k8s.io/v1",
                                                             "kind": "TokenRequest", "spec": {}}),
                                  name="sa", subresource="token")
    assert [(r.sub_resource, r.name) for r in seen] == [("token", "sa")]


async def test_the_admissionregistration_kinds_are_never_admitted():
    hook, seen = _recording()
    async with open_test_env(domain="k8s.io", controllers=False, admission=[hook]) as env:
        await env.client.create({"apiVersion": "admissionregistration.k8s.io/v1",
                                 "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"}, "webhooks": []})
    assert seen == []


async def test_a_namespace_selector_picks_namespaces_by_label():
    hook, seen = _recording(namespace_selector={"matchLabels": {"admit": "yes"}})
    async with open_test_env(controllers=False, admission=[hook]) as env:
        await env.client.create({"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "picked", "labels": {"admit": "yes"}}})
        seen.clear()
        await env.client.create(configmap(namespace="default"))
        await env.client.create(configmap(namespace="picked"))
    assert [r.namespace for r in seen] == ["picked"]


async def test_an_object_selector_picks_objects_by_label():
    hook, seen = _recording(object_selector={"matchLabels": {"admit": "yes"}})
    async with open_test_env(controllers=False, admission=[hook]) as env:
        await env.client.create(configmap("a"))
        await env.client.create(configmap("b", labels={"admit": "yes"}))
    assert [r.name for r in seen] == ["b"]


async def test_a_call_past_its_timeout_fails_closed_with_kubes_500(autojump_clock):
    async def hang(request: Request) -> Allowed:
        await trio.sleep_forever()

    hook = Webhook("hang.example.com", hang, rules=[EVERYTHING], timeout_seconds=2)
    async with open_test_env(controllers=False, admission=[hook]) as env:
        start = trio.current_time()
        with pytest.raises(errors.InternalError) as caught:
            await env.client.create(configmap())
        assert trio.current_time() - start == pytest.approx(2, abs=0.5)
    assert caught.value.message == ('Internal error occurred: failed calling webhook "hang.example.com": '
                                    'context deadline exceeded')


async def test_a_call_past_its_timeout_is_skipped_under_failure_policy_ignore(autojump_clock):
    async def hang(request: Request) -> Allowed:
        await trio.sleep_forever()

    hook = Webhook("hang.example.com", hang, rules=[EVERYTHING], timeout_seconds=1, failure_policy="Ignore")
    async with open_test_env(controllers=False, admission=[hook]) as env:
        assert (await env.client.create(configmap()))["metadata"]["name"] == "c"


async def test_an_exception_is_a_denial_with_500():
    async with open_test_env(controllers=False, admission=WEBHOOKS) as env:
        with pytest.raises(errors.StatusError) as caught:
            await env.client.create(configmap(data={"explode": "1"}))
    assert caught.value.code == 500
    assert caught.value.message == f'admission webhook "{STAMP_WEBHOOK.name}" denied the request: the stamp broke'


async def test_a_patch_that_does_not_apply_is_kubes_internal_error():
    async def bad(request: Request) -> Patch:
        return Patch(operations=[{"op": "replace", "path": "/nowhere/x", "value": 1}])

    async with open_test_env(controllers=False,
                             admission=[Webhook("bad.example.com", bad, rules=[EVERYTHING], mutating=True)]) as env:
        with pytest.raises(errors.InternalError) as caught:
            await env.client.create(configmap())
    assert caught.value.message.startswith("Internal error occurred: ")


async def test_a_validating_webhooks_patch_is_ignored():
    async def patching(request: Request) -> Patch:
        return Patch(operations=[{"op": "add", "path": "/data", "value": {"x": "y"}}])

    async with open_test_env(controllers=False,
                             admission=[Webhook("v.example.com", patching, rules=[EVERYTHING])]) as env:
        assert "data" not in await env.client.create(configmap())


async def test_audit_annotations_are_prefixed_by_the_webhooks_name():
    async def annotate(request: Request) -> Allowed:
        return Allowed(audit_annotations={"seen": "yes"})

    async with open_test_env(controllers=False,
                             admission=[Webhook("a.example.com", annotate, rules=[EVERYTHING])]) as env:
        step = env.registry.admission_chain.validating[-1]
        from_chain = await _annotations_of(step, env)
    assert from_chain == {"a.example.com/seen": "yes"}


async def _annotations_of(step, env) -> dict[str, str]:
    rt = env.registry.scheme.by_api_version_kind("v1", "ConfigMap")
    request = AdmissionRequest(ADMIN, rt, "create", configmap(), None, False)
    await step.validate(request)
    return request.audit_annotations


async def test_an_if_needed_webhook_is_reinvoked_when_a_later_one_changes_the_object():
    calls: list[str] = []

    async def first(request: Request) -> Allowed:
        calls.append(f"first {'reinvoked' if len(calls) else 'called'}")
        return Allowed()

    async def second(request: Request) -> Patch:
        calls.append("second")
        return Patch(operations=[{"op": "add", "path": "/data", "value": {"added": "1"}}]) \
            if request.object.data is None else Patch(object=request.object)

    hooks = [Webhook("first.example.com", first, rules=[EVERYTHING], mutating=True, reinvocation_policy="IfNeeded"),
             Webhook("second.example.com", second, rules=[EVERYTHING], mutating=True)]
    async with open_test_env(controllers=False, admission=hooks) as env:
        created = await env.client.create(configmap())
    assert created["data"] == {"added": "1"}
    assert calls == ["first called", "second", "first reinvoked"]


async def test_a_never_webhook_is_not_reinvoked():
    calls: list[str] = []

    async def first(request: Request) -> Allowed:
        calls.append("first")
        return Allowed()

    async def second(request: Request) -> Denied | Patch:
        calls.append("second")
        return Patch(operations=[{"op": "add", "path": "/data", "value": {"added": "1"}}])

    hooks = [Webhook("first.example.com", first, rules=[EVERYTHING], mutating=True),
             Webhook("second.example.com", second, rules=[EVERYTHING], mutating=True)]
    async with open_test_env(controllers=False, admission=hooks) as env:
        await env.client.create(configmap())
    assert calls == ["first", "second"]
