"""The foundation's API rules, through the HTTP app in process.

A few run behind real HTTPS too (`any_server`): create and get, a watch, and
a 413 answered only once the whole body was read (else the client would see
the connection reset, not the Status).
"""

from __future__ import annotations

import json

import pytest


ROLE = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "reader"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]}


def cr(name: str = "reader", **extra) -> dict:
    body = json.loads(json.dumps(ROLE))
    body["metadata"]["name"] = name
    body.update(extra)
    return body


async def test_create_answers_201_with_uid_creation_timestamp_and_resource_version(any_server):
    server = any_server
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=cr())
        assert r.status_code == 201, r.text
        meta = r.json()["metadata"]
        assert meta["uid"] and meta["creationTimestamp"] and meta["resourceVersion"].isdigit()
        got = await c.get(f"{server.rbac}/clusterroles/reader")
        assert got.status_code == 200 and got.json()["rules"] == ROLE["rules"]


async def test_create_of_existing_name_is_409_already_exists(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr())
        r = await c.post(f"{server.rbac}/clusterroles", json=cr())
        assert r.status_code == 409
        status = r.json()
        assert status["kind"] == "Status" and status["reason"] == "AlreadyExists"
        assert status["message"] == 'clusterroles.rbac.authorization.svc.io "reader" already exists'


async def test_generate_name_gets_a_unique_suffix(server):
    async with server.client() as c:
        body = cr()
        body["metadata"] = {"generateName": "gen-"}
        a = (await c.post(f"{server.rbac}/clusterroles", json=body)).json()["metadata"]["name"]
        b = (await c.post(f"{server.rbac}/clusterroles", json=body)).json()["metadata"]["name"]
        assert a.startswith("gen-") and b.startswith("gen-") and a != b


async def test_get_of_missing_object_is_404_not_found(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles/nope")
        assert r.status_code == 404
        assert r.json()["message"] == 'clusterroles.rbac.authorization.svc.io "nope" not found'
        assert r.json()["details"] == {"name": "nope", "group": "rbac.authorization.svc.io", "kind": "clusterroles"}


async def test_put_with_stale_resource_version_is_409_conflict(server):
    async with server.client() as c:
        created = (await c.post(f"{server.rbac}/clusterroles", json=cr())).json()
        first = dict(created, rules=[{"verbs": ["list"], "apiGroups": [""], "resources": ["namespaces"]}])
        assert (await c.put(f"{server.rbac}/clusterroles/reader", json=first)).status_code == 200
        stale = dict(created, rules=[{"verbs": ["watch"], "apiGroups": [""], "resources": ["namespaces"]}])
        r = await c.put(f"{server.rbac}/clusterroles/reader", json=stale)
        assert r.status_code == 409 and r.json()["reason"] == "Conflict"


async def test_put_without_resource_version_is_an_unconditional_update(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr())
        r = await c.put(f"{server.rbac}/clusterroles/reader", json=cr(rules=[{"verbs": ["*"], "nonResourceURLs": ["/x"]}]))
        assert r.status_code == 200 and r.json()["rules"] == [{"verbs": ["*"], "nonResourceURLs": ["/x"]}]


async def test_put_of_missing_object_creates_it_with_201(server):
    async with server.client() as c:
        r = await c.put(f"{server.rbac}/clusterroles/fresh", json=cr("fresh"))
        assert r.status_code == 201


async def test_resource_version_moves_on_every_write(server):
    async with server.client() as c:
        a = (await c.post(f"{server.rbac}/clusterroles", json=cr("a"))).json()["metadata"]["resourceVersion"]
        b = (await c.post(f"{server.rbac}/clusterroles", json=cr("b"))).json()["metadata"]["resourceVersion"]
        assert int(b) > int(a)


async def test_text_in_a_number_field_is_400_bad_request(server):
    async with server.client() as c:
        body = cr()
        body["metadata"]["generation"] = "abc"
        r = await c.post(f"{server.rbac}/clusterroles", json=body)
        assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
        assert "generation" in r.json()["message"]


async def test_a_string_where_a_list_is_expected_is_400(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=cr(rules=[{"verbs": "get"}]))
        assert r.status_code == 400


async def test_semantic_errors_are_422_with_one_cause_per_field(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=cr(rules=[{"verbs": [], "resources": ["x"]}]))
        assert r.status_code == 422
        status = r.json()
        assert status["reason"] == "Invalid"
        fields = [c["field"] for c in status["details"]["causes"]]
        assert fields == ["rules[0].verbs", "rules[0].apiGroups"]


async def test_rbac_names_are_path_segments_so_colons_are_valid(server):
    async with server.client() as c:
        assert (await c.post(f"{server.rbac}/clusterroles", json=cr("team:reader"))).status_code == 201
        r = await c.post(f"{server.rbac}/clusterroles", json=cr("a%b"))
        assert r.status_code == 422


async def test_namespace_names_are_dns_labels(server):
    async with server.client() as c:
        r = await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                       "metadata": {"name": "Not_A_Label"}})
        assert r.status_code == 422


async def test_role_with_non_resource_urls_is_invalid(server):
    async with server.client() as c:
        body = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role", "metadata": {"name": "r"},
                "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}
        r = await c.post(f"{server.rbac}/namespaces/default/roles", json=body)
        assert r.status_code == 422
        assert "namespaced rules cannot apply to non-resource URLs" in r.json()["message"]


async def test_non_resource_urls_are_stored_as_sent_as_kubernetes_validation_does_not_check_stars(server):
    async with server.client() as c:
        ok = cr("ok", rules=[{"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}])
        odd = cr("odd", rules=[{"verbs": ["get"], "nonResourceURLs": ["/ap*"]}])
        assert (await c.post(f"{server.rbac}/clusterroles", json=ok)).status_code == 201
        assert (await c.post(f"{server.rbac}/clusterroles", json=odd)).status_code == 201


async def test_role_ref_is_immutable(server):
    async with server.client() as c:
        crb = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
               "roleRef": {"apiGroup": "rbac.authorization.svc.io", "kind": "ClusterRole", "name": "view"},
               "subjects": [{"kind": "User", "name": "alice"}]}
        created = (await c.post(f"{server.rbac}/clusterrolebindings", json=crb)).json()
        assert created["subjects"][0]["apiGroup"] == "rbac.authorization.svc.io"  # defaulted
        created["roleRef"]["name"] = "edit"
        r = await c.put(f"{server.rbac}/clusterrolebindings/b", json=created)
        assert r.status_code == 422 and "cannot change roleRef" in r.json()["message"]


async def test_namespace_in_body_must_agree_with_path(server):
    async with server.client() as c:
        body = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role",
                "metadata": {"name": "r", "namespace": "other"}, "rules": []}
        r = await c.post(f"{server.rbac}/namespaces/default/roles", json=body)
        assert r.status_code == 400


async def test_namespaced_object_needs_an_existing_namespace(server):
    async with server.client() as c:
        body = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role", "metadata": {"name": "r"}, "rules": []}
        r = await c.post(f"{server.rbac}/namespaces/missing/roles", json=body)
        assert r.status_code == 404 and r.json()["message"] == 'namespaces "missing" not found'


async def test_roles_list_in_one_namespace_and_across_all(server):
    async with server.client() as c:
        for ns in ("a", "b"):
            await c.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            body = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "Role", "metadata": {"name": "r"}, "rules": []}
            assert (await c.post(f"{server.rbac}/namespaces/{ns}/roles", json=body)).status_code == 201
        one = (await c.get(f"{server.rbac}/namespaces/a/roles")).json()
        every = (await c.get(f"{server.rbac}/roles")).json()
        assert one["kind"] == "RoleList" and [i["metadata"]["namespace"] for i in one["items"]] == ["a"]
        assert sorted(i["metadata"]["namespace"] for i in every["items"]) == ["a", "b"]


async def test_list_field_selector_on_metadata_name(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr("x1"))
        await c.post(f"{server.rbac}/clusterroles", json=cr("x2"))
        r = await c.get(f"{server.rbac}/clusterroles", params={"fieldSelector": "metadata.name=x2"})
        assert [i["metadata"]["name"] for i in r.json()["items"]] == ["x2"]


async def test_delete_without_finalizers_removes_and_answers_success_status(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr())
        r = await c.delete(f"{server.rbac}/clusterroles/reader")
        assert r.status_code == 200
        assert r.json()["status"] == "Success" and r.json()["details"]["name"] == "reader"
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).status_code == 404


async def test_delete_with_finalizers_is_two_phase(server):
    async with server.client() as c:
        body = cr()
        body["metadata"]["finalizers"] = ["example.com/hold"]
        await c.post(f"{server.rbac}/clusterroles", json=body)
        first = await c.delete(f"{server.rbac}/clusterroles/reader")
        assert first.status_code == 200
        stamp = first.json()["metadata"]["deletionTimestamp"]
        again = await c.delete(f"{server.rbac}/clusterroles/reader")
        assert again.json()["metadata"]["deletionTimestamp"] == stamp  # never moved by a later delete
        current = (await c.get(f"{server.rbac}/clusterroles/reader")).json()
        current["metadata"]["finalizers"] = []
        assert (await c.put(f"{server.rbac}/clusterroles/reader", json=current)).status_code == 200
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).status_code == 404


async def test_request_without_valid_token_is_401(server):
    async with server.client(token="not-a-token") as c:
        r = await c.get(f"{server.rbac}/clusterroles")
        assert r.status_code == 401 and r.json()["reason"] == "Unauthorized"


async def test_body_over_the_limit_is_413(any_server):
    server = any_server
    async with server.client() as c:
        body = cr()
        body["metadata"]["annotations"] = {"big": "x" * (3 * 1024 * 1024 + 10)}
        r = await c.post(f"{server.rbac}/clusterroles", json=body)
        assert r.status_code == 413 and r.json()["reason"] == "RequestEntityTooLarge"


async def test_unknown_path_is_404_status(server):
    async with server.client() as c:
        r = await c.get("/apis/nothing.svc.io/v1/things")
        assert r.status_code == 404 and r.json()["kind"] == "Status"


async def test_unacceptable_accept_is_406(server):
    async with server.client() as c:
        r = await c.get(f"{server.rbac}/clusterroles", headers={"Accept": "text/html"})
        assert r.status_code == 406 and r.json()["reason"] == "NotAcceptable"


async def test_unsupported_content_type_is_415(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", content=b"x", headers={"Content-Type": "text/plain"})
        assert r.status_code == 415 and r.json()["reason"] == "UnsupportedMediaType"


async def test_reviews_only_accept_post(server):
    async with server.client() as c:
        r = await c.get(f"{server.authz}/subjectaccessreviews")
        assert r.status_code == 405 and r.json()["reason"] == "MethodNotAllowed"


async def test_version_reports_kubernetes_like_minor(server):
    async with server.client() as c:
        v = (await c.get("/version")).json()
        assert v["major"] == "1" and v["minor"] == "32" and "miniplane" in v["gitVersion"]


async def test_the_system_namespaces_exist_at_first_start(server):
    # As kube-apiserver's bootstrap and system namespaces controllers make them.
    async with server.client() as c:
        listed = (await c.get("/api/v1/namespaces")).json()["items"]
        assert [ns["metadata"]["name"] for ns in listed] == ["default", "kube-node-lease", "kube-public",
                                                             "kube-system"]
        for ns in listed:
            assert ns["status"]["phase"] == "Active" and ns["spec"]["finalizers"] == ["kubernetes"]


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
async def test_deleting_an_immortal_namespace_is_refused(server, name):
    async with server.client() as c:
        r = await c.delete(f"/api/v1/namespaces/{name}")
        assert (r.status_code, r.json()["message"]) == (
            403, f'namespaces "{name}" is forbidden: this namespace may not be deleted')


async def test_kube_node_lease_may_be_deleted(server):
    # NamespaceLifecycle keeps default, kube-system and kube-public only; the next start makes it again.
    async with server.client() as c:
        r = await c.delete("/api/v1/namespaces/kube-node-lease")
        assert r.status_code == 200 and r.json()["status"]["phase"] == "Terminating"


async def test_watch_streams_changes_after_a_resource_version(any_server, autojump_clock):
    server = any_server
    async with server.client() as c:
        rv = (await c.get(f"{server.rbac}/clusterroles")).json()["metadata"]["resourceVersion"]
        await c.post(f"{server.rbac}/clusterroles", json=cr("w1"))
        await c.delete(f"{server.rbac}/clusterroles/w1")
        seen = []
        async with c.stream("GET", f"{server.rbac}/clusterroles",
                            params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}) as r:
            async for line in r.aiter_lines():
                if line:
                    event = json.loads(line)
                    seen.append((event["type"], event["object"]["metadata"]["name"]))
        assert seen == [("ADDED", "w1"), ("DELETED", "w1")]


async def test_watch_on_an_item_path_sees_only_that_object(server, autojump_clock):
    async with server.client() as c:
        rv = (await c.get(f"{server.rbac}/clusterroles")).json()["metadata"]["resourceVersion"]
        await c.post(f"{server.rbac}/clusterroles", json=cr("other"))
        await c.post(f"{server.rbac}/clusterroles", json=cr("mine"))
        seen = []
        async with c.stream("GET", f"{server.rbac}/clusterroles/mine",
                            params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "1"}) as r:
            async for line in r.aiter_lines():
                if line and json.loads(line)["type"] != "BOOKMARK":
                    seen.append(json.loads(line)["object"]["metadata"]["name"])
        assert seen == ["mine"]


async def test_writing_rules_of_an_aggregated_cluster_role_warns_they_are_controller_managed(server):
    async with server.client() as c:
        body = cr("agg", aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}, rules=[])
        created = await c.post(f"{server.rbac}/clusterroles", json=body)
        assert created.status_code == 201 and created.headers.get_list("warning") == []
        edited = dict(created.json(), rules=[{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}])
        r = await c.put(f"{server.rbac}/clusterroles/agg", json=edited)
        assert r.status_code == 200
        [warning] = r.headers.get_list("warning")
        assert warning.startswith("299 - ") and "clusterrole-aggregation-controller" in warning


async def test_the_aggregation_controllers_own_writes_earn_no_warning(server):
    async with server.client() as c:
        body = cr("agg2", aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}, rules=[])
        await c.post(f"{server.rbac}/clusterroles", json=body)
        applied = {"apiVersion": "rbac.authorization.svc.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg2"},
                   "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]}
        r = await c.patch(f"{server.rbac}/clusterroles/agg2", json=applied,
                          params={"fieldManager": "clusterrole-aggregation-controller", "force": "true"},
                          headers={"Content-Type": "application/apply-patch+yaml"})
        assert r.status_code == 200 and r.headers.get_list("warning") == []
