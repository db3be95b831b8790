"""Admission webhooks over HTTP, as kube-apiserver calls them: a real HTTPS webhook server
(tests/support/webhookserver.py) records every AdmissionReview, and each test checks what kube would send
(uid, kind, resource, subResource, operation, userInfo, object, oldObject, dryRun, options) and what the
server answers: mutations stored, reinvocation, denials with the webhook's code and message, warnings as
Warning headers, audit annotations in the audit log, metrics in /metrics.

Memory store only (admission is the registry's, not the store's); the API domain k8s.io (what clients of
admissionregistration.k8s.io expect). On trio's real clock: the webhook answers over real sockets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.admission_webhooks import (
    CONFIGURATIONS, allow, answer, deny, mutating_configuration, patch, reviews, validating_configuration, webhook,
)
from tests.support.crds import crd_path, established
from tests.support.metrics import scrape
from tests.support.server import Server, start_in_process
from tests.support.webhookserver import start_webhook_server

pytestmark = pytest.mark.stores("memory")

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
# Level Request: kube leaves a mutating webhook's patch annotation out of events below it.
AUDIT_POLICY = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n"


@pytest.fixture
async def server(nursery, tmp_path) -> Server:
    (tmp_path / "policy.yaml").write_text(AUDIT_POLICY)
    return await start_in_process(nursery, tmp_path, api_domain="k8s.io", audit_policy_file=str(tmp_path /
                                  "policy.yaml"), audit_log_path=str(tmp_path / "audit.log"))


async def _configure(server: Server, configuration: dict) -> None:
    async with server.client() as c:
        r = await c.post(CONFIGURATIONS[configuration["kind"]], json=configuration)
        assert r.status_code == 201, r.text


def _cm(name: str = "c", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", **({"labels": labels} if labels else {})},
            "data": {"a": "1"}}


def _audit_events(server: Server) -> list[dict]:
    log = Path(server.data_dir).parent / "audit.log"
    return [json.loads(line) for line in log.read_text().splitlines()]


async def test_a_create_sends_kubes_admission_review(server, nursery):
    hook = await start_webhook_server(nursery, allow())
    await _configure(server, validating_configuration("v", webhook("check.example.com", hook.client_config("/v"))))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm(), params={"fieldManager": "tester"})
        assert r.status_code == 201, r.text
    [review] = reviews(hook)
    assert (review["apiVersion"], review["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    request = review["request"]
    assert request["uid"] and request["uid"] != r.json()["metadata"]["uid"]
    assert request["kind"] == request["requestKind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == request["requestResource"] == {"group": "", "version": "v1",
                                                                 "resource": "configmaps"}
    assert "subResource" not in request
    assert (request["name"], request["namespace"], request["operation"]) == ("c", "default", "CREATE")
    assert request["userInfo"]["username"] == "admin" and "system:masters" in request["userInfo"]["groups"]
    assert request["object"]["data"] == {"a": "1"} and request["object"]["metadata"]["name"] == "c"
    assert request["oldObject"] is None and request["dryRun"] is False
    assert request["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester",
                                  "fieldValidation": "Warn"}
    assert hook.requests[0].path == "/v?timeout=10s"


async def test_update_patch_and_delete_send_their_operation_objects_and_options(server, nursery):
    hook = await start_webhook_server(nursery, allow())
    await _configure(server, validating_configuration("v", webhook("check.example.com", hook.client_config("/v"))))
    async with server.client() as c:
        created = (await c.post(CONFIGMAPS, json=_cm())).json()
        put = await c.put(f"{CONFIGMAPS}/c", json=dict(created, data={"a": "2"}))
        assert put.status_code == 200, put.text
        patched = await c.patch(f"{CONFIGMAPS}/c", json={"data": {"a": "3"}},
                                headers={"Content-Type": "application/merge-patch+json"})
        assert patched.status_code == 200, patched.text
        deleted = await c.request("DELETE", f"{CONFIGMAPS}/c", json={"propagationPolicy": "Background"})
        assert deleted.status_code == 200, deleted.text
    _, update, patch_, delete = (r["request"] for r in reviews(hook))
    assert (update["operation"], update["object"]["data"], update["oldObject"]["data"]) == (
        "UPDATE", {"a": "2"}, {"a": "1"})
    assert update["options"]["kind"] == "UpdateOptions"
    assert (patch_["operation"], patch_["object"]["data"], patch_["oldObject"]["data"]) == (
        "UPDATE", {"a": "3"}, {"a": "2"})
    assert delete["operation"] == "DELETE" and delete["object"] is None
    assert delete["oldObject"]["data"] == {"a": "3"}
    assert delete["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                 "propagationPolicy": "Background"}


async def test_a_status_write_names_its_subresource(server, nursery):
    hook = await start_webhook_server(nursery, allow())
    await _configure(server, validating_configuration("v", webhook(
        "status.example.com", hook.client_config("/v"), resources=("namespaces/status",))))
    async with server.client() as c:
        ns = (await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                         "metadata": {"name": "team"}})).json()
        assert reviews(hook) == []  # namespaces/status matches no write of the namespace itself
        r = await c.put("/api/v1/namespaces/team/status", json=ns)
        assert r.status_code == 200, r.text
    [review] = reviews(hook)
    request = review["request"]
    assert request["subResource"] == request["requestSubResource"] == "status"
    assert (request["operation"], request["name"], request["namespace"]) == ("UPDATE", "team", "team")
    assert request["kind"]["kind"] == "Namespace"


async def test_a_custom_resource_is_sent_to_its_webhook(nursery, tmp_path):
    server = await start_in_process(nursery, tmp_path, api_domain="k8s.io", controllers=True)
    hook = await start_webhook_server(nursery, allow())
    await _configure(server, validating_configuration("v", webhook(
        "crs.example.com", hook.client_config("/v"), groups=("stable.example.com",), resources=("crontabs",))))
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "crontabs.stable.example.com"},
           "spec": {"group": "stable.example.com", "scope": "Namespaced",
                    "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    async with server.client() as c:
        r = await c.post(crd_path("k8s.io"), json=crd)
        assert r.status_code == 201, r.text
        await established(c, "crontabs.stable.example.com", "k8s.io")
        r = await c.post("/apis/stable.example.com/v1/namespaces/default/crontabs",
                         json={"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                               "metadata": {"name": "t"}, "spec": {"cron": "* * * * */5"}})
        assert r.status_code == 201, r.text
    [review] = reviews(hook)
    request = review["request"]
    assert request["kind"] == {"group": "stable.example.com", "version": "v1", "kind": "CronTab"}
    assert request["resource"] == {"group": "stable.example.com", "version": "v1", "resource": "crontabs"}
    assert request["object"]["spec"] == {"cron": "* * * * */5"}


async def test_a_denial_is_answered_in_kubes_words_with_the_webhooks_code_and_its_warnings(server, nursery):
    hook = await start_webhook_server(nursery, deny("no configmaps today", code=409, warnings=["think twice"]))
    await _configure(server, validating_configuration("v", webhook("check.example.com", hook.client_config("/v"))))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm())
        assert r.status_code == 409, r.text
        assert r.json()["message"] == 'admission webhook "check.example.com" denied the request: no configmaps today'
        assert r.headers.get_list("Warning") == ['299 - "think twice"']
        assert (await c.get(f"{CONFIGMAPS}/c")).status_code == 404


async def test_a_denial_without_a_code_is_a_400_and_without_a_message_says_so(server, nursery):
    hook = await start_webhook_server(nursery, deny())
    await _configure(server, validating_configuration("v", webhook("check.example.com", hook.client_config("/v"))))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm())
    assert r.status_code == 400
    assert r.json()["message"] == 'admission webhook "check.example.com" denied the request without explanation'


async def test_warnings_of_an_allowed_write_are_warning_headers(server, nursery):
    hook = await start_webhook_server(nursery, allow(warnings=["first", "second"]))
    await _configure(server, validating_configuration("v", webhook("check.example.com", hook.client_config("/v"))))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm())
    assert r.status_code == 201
    assert r.headers.get_list("Warning") == ['299 - "first"', '299 - "second"']


async def test_a_mutating_webhooks_patch_is_stored_and_annotated_in_the_audit_log(server, nursery):
    hook = await start_webhook_server(nursery, patch([{"op": "add", "path": "/metadata/labels",
                                                       "value": {"mutated": "yes"}}]))
    await _configure(server, mutating_configuration("m", webhook("label.example.com", hook.client_config("/m"))))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm())
        assert r.status_code == 201, r.text
        assert r.json()["metadata"]["labels"] == {"mutated": "yes"}
        assert (await c.get(f"{CONFIGMAPS}/c")).json()["metadata"]["labels"] == {"mutated": "yes"}
    [review] = reviews(hook)
    assert "uid" not in review["request"]["object"]["metadata"]  # kube fills it after mutating admission
    [event] = [e for e in _audit_events(server) if e["verb"] == "create" and e["stage"] == "ResponseComplete"
               and e["objectRef"].get("resource") == "configmaps"]
    annotations = event["annotations"]
    assert json.loads(annotations["mutation.webhook.admission.k8s.io/round_0_index_0"]) == {
        "configuration": "m", "webhook": "label.example.com", "mutated": True}
    assert json.loads(annotations["patch.webhook.admission.k8s.io/round_0_index_0"]) == {
        "configuration": "m", "webhook": "label.example.com", "patchType": "JSONPatch",
        "patch": [{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]}


async def test_a_webhooks_audit_annotations_reach_the_audit_log_under_its_name(server, nursery):
    hook = await start_webhook_server(nursery, allow(auditAnnotations={"checked": "yes"}))
    await _configure(server, validating_configuration("v", webhook("check.example.com", hook.client_config("/v"))))
    async with server.client() as c:
        assert (await c.post(CONFIGMAPS, json=_cm())).status_code == 201
    [event] = [e for e in _audit_events(server) if e["verb"] == "create" and e["stage"] == "ResponseComplete"
               and e["objectRef"].get("resource") == "configmaps"]
    assert event["annotations"]["check.example.com/checked"] == "yes"


async def test_an_if_needed_webhook_is_reinvoked_after_a_later_webhook_changes_the_object(server, nursery):
    first = await start_webhook_server(nursery, allow())
    second = await start_webhook_server(nursery, patch([{"op": "add", "path": "/data/b", "value": "2"}]))
    await _configure(server, mutating_configuration(
        "a-first", webhook("first.example.com", first.client_config("/m"), reinvocationPolicy="IfNeeded")))
    await _configure(server, mutating_configuration("b-second", webhook("second.example.com",
                                                                        second.client_config("/m"))))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm())
        assert r.status_code == 201, r.text
        assert r.json()["data"] == {"a": "1", "b": "2"}
    assert [r["request"]["object"]["data"] for r in reviews(first)] == [{"a": "1"}, {"a": "1", "b": "2"}]
    assert len(second.requests) == 1  # Never: not called again
    [event] = [e for e in _audit_events(server) if e["verb"] == "create" and e["stage"] == "ResponseComplete"
               and e["objectRef"].get("resource") == "configmaps"]
    assert "mutation.webhook.admission.k8s.io/round_1_index_0" in event["annotations"]


async def test_a_validating_webhook_sees_the_mutated_object(server, nursery):
    mutator = await start_webhook_server(nursery, patch([{"op": "add", "path": "/data/m", "value": "x"}]))
    validator = await start_webhook_server(nursery, allow())
    await _configure(server, mutating_configuration("m", webhook("m.example.com", mutator.client_config("/m"))))
    await _configure(server, validating_configuration("v", webhook("v.example.com", validator.client_config("/v"))))
    async with server.client() as c:
        assert (await c.post(CONFIGMAPS, json=_cm())).status_code == 201
    [review] = reviews(validator)
    assert review["request"]["object"]["data"] == {"a": "1", "m": "x"}
    assert review["request"]["object"]["metadata"]["uid"]  # validating admission runs after the uid is set


async def test_a_dry_run_skips_no_webhook_but_refuses_one_with_side_effects(server, nursery):
    hook = await start_webhook_server(nursery, allow())
    await _configure(server, validating_configuration("v", webhook("none.example.com", hook.client_config("/v"))))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm(), params={"dryRun": "All"})
        assert r.status_code == 201, r.text
        [review] = reviews(hook)
        assert review["request"]["dryRun"] is True and review["request"]["options"]["dryRun"] == ["All"]
        config = (await c.get(f"{CONFIGURATIONS['ValidatingWebhookConfiguration']}/v")).json()
    await _configure(server, validating_configuration("w", webhook("some.example.com", hook.client_config("/v"),
                                                                   sideEffects="NoneOnDryRun")))
    assert config["webhooks"][0]["sideEffects"] == "None"
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm(), params={"dryRun": "All"})
        assert r.status_code == 201, r.text


async def test_the_admissionregistration_kinds_are_never_sent_to_webhooks(server, nursery):
    hook = await start_webhook_server(nursery, deny("nothing"))
    await _configure(server, validating_configuration("v", webhook(
        "all.example.com", hook.client_config("/v"), groups=("*",), resources=("*",))))
    await _configure(server, validating_configuration("w", webhook("other.example.com", hook.client_config("/v"))))
    assert reviews(hook) == []


async def test_metrics_count_calls_and_rejections_with_kubes_names_and_labels(server, nursery):
    allowing = await start_webhook_server(nursery, allow())
    denying = await start_webhook_server(nursery, deny("no", code=403))
    await _configure(server, validating_configuration(
        "v", webhook("allow.example.com", allowing.client_config("/v")),
        webhook("deny.example.com", denying.client_config("/v"), operations=("DELETE",))))
    async with server.client() as c:
        assert (await c.post(CONFIGMAPS, json=_cm())).status_code == 201
        assert (await c.delete(f"{CONFIGMAPS}/c")).status_code == 403
        samples = await scrape(c)
    assert samples.value("apiserver_admission_webhook_request_total", name="allow.example.com", type="validating",
                         operation="CREATE", code="200", rejected="false") == 1
    assert samples.value("apiserver_admission_webhook_admission_duration_seconds_count", name="allow.example.com",
                         type="validating", operation="CREATE", rejected="false") == 1
    assert samples.value("apiserver_admission_webhook_rejection_count", name="deny.example.com", type="validating",
                         operation="DELETE", error_type="no_error", rejection_code="403") == 1
    assert samples.value("apiserver_admission_webhook_request_total", name="deny.example.com", type="validating",
                         operation="DELETE", code="403", rejected="true") == 1


async def test_a_service_client_config_reaches_the_webhook_through_its_service(server, nursery):
    hook = await start_webhook_server(nursery, allow(), hosts=("hook.hooks.svc",))
    port = int(hook.url.rsplit(":", 1)[1])
    async with server.client() as c:
        await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": "hooks"}})
        # Endpoints may not hold a loopback address (kube's validation): an ExternalName Service names it.
        r = await c.post("/api/v1/namespaces/hooks/services", json={
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "hook", "namespace": "hooks"},
            "spec": {"type": "ExternalName", "externalName": "localhost"}})
        assert r.status_code == 201, r.text
    config = {"service": {"namespace": "hooks", "name": "hook", "path": "/v", "port": port},
              "caBundle": hook.ca_bundle}
    await _configure(server, validating_configuration("v", webhook("svc.example.com", config)))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm())
        assert r.status_code == 201, r.text
    [request] = hook.requests
    assert request.headers["host"] == f"hook.hooks.svc:{port}"


async def test_an_answer_with_another_uid_is_an_invalid_response(server, nursery):
    async def wrong_uid(request):
        return dict(answer(request, allowed=True), response={"uid": "other", "allowed": True})
    hook = await start_webhook_server(nursery, wrong_uid)
    await _configure(server, validating_configuration("v", webhook("uid.example.com", hook.client_config("/v"))))
    async with server.client() as c:
        r = await c.post(CONFIGMAPS, json=_cm())
    uid = reviews(hook)[0]["request"]["uid"]
    assert r.status_code == 500
    assert r.json()["message"] == ('Internal error occurred: failed calling webhook "uid.example.com": received '
                                   f'invalid webhook response: expected response.uid="{uid}", got "other"')
