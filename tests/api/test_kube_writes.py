"""Writes answer as kube-apiserver answers (issue 16): create on update, namespaces and names in the
body, UID preconditions, managed fields, and the codes of write errors."""

from __future__ import annotations

from tests.support.rbac import ok

MERGE = {"Content-Type": "application/merge-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}


def role(srv, name: str = "r", **meta) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "Role",
            "metadata": {"name": name, **meta}, "rules": []}


def cluster_role(srv, name: str = "c", **meta) -> dict:
    return {"apiVersion": f"rbac.authorization.{srv.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name, **meta}, "rules": []}


async def setup_namespace(c, name: str = "a") -> None:
    await ok(await c.post("/api/v1/namespaces", json={"metadata": {"name": name}}), 201)


def managers(obj: dict) -> set[str]:
    return {e["manager"] for e in obj["metadata"].get("managedFields") or []}


async def test_rbac_kinds_create_on_put_and_namespaces_do_not(server):
    async with server.client() as c:
        r = await c.put(f"{server.rbac}/clusterroles/made", json=cluster_role(server, "made"))
        assert r.status_code == 201
        missing = await c.put("/api/v1/namespaces/nowhere", json={"metadata": {"name": "nowhere"}})
        assert missing.status_code == 404 and missing.json()["reason"] == "NotFound"
        assert missing.json()["message"] == 'namespaces "nowhere" not found'


async def test_cluster_scoped_body_namespace_is_cleared_on_create(server):
    async with server.client() as c:
        created = await ok(await c.post(f"{server.rbac}/clusterroles", json=cluster_role(server, namespace="x")), 201)
        assert "namespace" not in created["metadata"]
        ns = await ok(await c.post("/api/v1/namespaces", json={"metadata": {"name": "n1", "namespace": "x"}}), 201)
        assert "namespace" not in ns["metadata"]


async def test_namespaced_body_in_another_namespace_is_400_on_create_update_and_patch(server):
    async with server.client() as c:
        await setup_namespace(c)
        url = f"{server.rbac}/namespaces/a/roles"
        r = await c.post(url, json=role(server, namespace="b"))
        assert r.status_code == 400 and r.json()["message"] == (
            "the namespace of the provided object does not match the namespace sent on the request")
        await ok(await c.post(url, json=role(server)), 201)
        r = await c.put(f"{url}/r", json=role(server, namespace="b"))
        assert r.status_code == 400 and r.json()["message"] == (
            "the namespace of the provided object does not match the namespace sent on the request")
        # A patch is checked by the patch handler's checkName, in its words.
        r = await c.patch(f"{url}/r", json={"metadata": {"namespace": "b"}}, headers=MERGE)
        assert r.status_code == 400 and r.json()["message"] == (
            "the namespace of the object (b) does not match the namespace on the request (a)")


async def test_put_body_must_name_the_object_of_the_url(server):
    async with server.client() as c:
        await ok(await c.post(f"{server.rbac}/clusterroles", json=cluster_role(server)), 201)
        nameless = cluster_role(server)
        del nameless["metadata"]["name"]
        r = await c.put(f"{server.rbac}/clusterroles/c", json=nameless)
        assert r.status_code == 400 and r.json()["message"] == (
            "the name of the object (c based on URL) was undeterminable: name must be provided")
        r = await c.put(f"{server.rbac}/clusterroles/c", json=cluster_role(server, "other"))
        assert r.status_code == 400 and r.json()["message"] == (
            "the name of the object (other) does not match the name on the URL (c)")


async def test_put_body_without_api_version_and_kind_takes_the_urls(server):
    # The decoder defaults them from the request (Kubernetes' defaultGVK), so the body is accepted.
    async with server.client() as c:
        created = await ok(await c.put(f"{server.rbac}/clusterroles/bare",
                                       json={"metadata": {"name": "bare"}, "rules": []}), 201)
        assert (created["apiVersion"], created["kind"]) == (f"rbac.authorization.{server.domain}/v1", "ClusterRole")
        updated = await ok(await c.put(f"{server.rbac}/clusterroles/bare",
                                       json={"metadata": {"name": "bare", "labels": {"x": "y"}}, "rules": []}))
        assert updated["metadata"]["labels"] == {"x": "y"}


async def test_put_with_another_uid_is_409_a_uid_precondition(server):
    async with server.client() as c:
        created = await ok(await c.post(f"{server.rbac}/clusterroles", json=cluster_role(server)), 201)
        body = cluster_role(server, uid="not-the-uid")
        r = await c.put(f"{server.rbac}/clusterroles/c", json=body)
        assert r.status_code == 409 and r.json()["reason"] == "Conflict"
        assert r.json()["message"].endswith("Precondition failed: UID in precondition: not-the-uid, UID in object "
                                            f"meta: {created['metadata']['uid']}")
        # Creating by PUT with a uid fails the same precondition against the missing object.
        r = await c.put(f"{server.rbac}/clusterroles/new", json=cluster_role(server, "new", uid="some-uid"))
        assert r.status_code == 409 and r.json()["message"].endswith(
            "Precondition failed: UID in precondition: some-uid, UID in object meta: ")
        same = await ok(await c.put(f"{server.rbac}/clusterroles/c",
                                    json=cluster_role(server, uid=created["metadata"]["uid"], labels={"k": "v"})))
        assert same["metadata"]["labels"] == {"k": "v"}


async def test_a_patch_that_changes_the_uid_is_422_and_a_changed_creation_timestamp_is_kept(server):
    async with server.client() as c:
        created = await ok(await c.post(f"{server.rbac}/clusterroles", json=cluster_role(server)), 201)
        r = await c.patch(f"{server.rbac}/clusterroles/c", headers=MERGE, json={"metadata": {"uid": "other"}})
        assert r.status_code == 422 and r.json()["reason"] == "Invalid"
        assert r.json()["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.uid",
                                                  "message": 'Invalid value: "other": field is immutable'}]
        # BeforeUpdate resets a changed creationTimestamp silently, as Kubernetes does.
        kept = await ok(await c.patch(f"{server.rbac}/clusterroles/c", headers=MERGE,
                                      json={"metadata": {"creationTimestamp": "2001-01-01T00:00:00Z",
                                                         "labels": {"k": "v"}}}))
        assert kept["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]
        assert kept["metadata"]["uid"] == created["metadata"]["uid"] and kept["metadata"]["labels"] == {"k": "v"}


async def test_managed_fields_are_reset_by_an_update_or_a_non_apply_patch_with_an_empty_list(server):
    async with server.client() as c:
        created = await ok(await c.post(f"{server.rbac}/clusterroles", json=cluster_role(server)), 201)
        assert created["metadata"]["managedFields"]
        body = dict(created, metadata=dict(created["metadata"], managedFields=[]))
        reset = await ok(await c.put(f"{server.rbac}/clusterroles/c", json=body))
        assert "managedFields" not in reset["metadata"]
        await ok(await c.post(f"{server.rbac}/clusterroles", json=cluster_role(server, "d")), 201)
        patched = await ok(await c.patch(f"{server.rbac}/clusterroles/d", json={"metadata": {"managedFields": []}},
                                         headers=MERGE))
        assert "managedFields" not in patched["metadata"]
        # Without managedFields in the body, the stored ones stay.
        kept = await ok(await c.patch(f"{server.rbac}/clusterroles/c", json={"metadata": {"labels": {"a": "b"}}},
                                      headers=MERGE))
        assert "managedFields" not in kept["metadata"]  # an object reset stays untracked, as Kubernetes


async def test_managed_fields_record_what_the_client_sent_not_the_strategys_defaults(server):
    async with server.client() as c:
        ns = await ok(await c.post("/api/v1/namespaces", json={"metadata": {"name": "owned"}},
                                   params={"fieldManager": "creator"}), 201)
        (entry,) = ns["metadata"]["managedFields"]
        assert entry["manager"] == "creator"
        # The name label is a default (SetDefaults_Namespace): the creator owns it, as in Kubernetes;
        # spec.finalizers and status.phase are set by the strategy: nobody owns them.
        assert entry["fieldsV1"] == {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}}
        assert ns["spec"]["finalizers"] == ["kubernetes"] and ns["status"]["phase"] == "Active"


async def test_strict_unknown_field_is_422_on_merge_and_strategic_patches_and_400_on_post_and_put(server):
    strict = {"fieldValidation": "Strict"}
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=dict(cluster_role(server), bogus=1), params=strict)
        assert r.status_code == 400
        await ok(await c.post(f"{server.rbac}/clusterroles", json=cluster_role(server)), 201)
        r = await c.put(f"{server.rbac}/clusterroles/c", json=dict(cluster_role(server), bogus=1), params=strict)
        assert r.status_code == 400
        r = await c.patch(f"{server.rbac}/clusterroles/c", json={"bogus": 1}, headers=MERGE, params=strict)
        assert r.status_code == 422 and r.json()["reason"] == "Invalid"
        (cause,) = r.json()["details"]["causes"]
        assert cause["field"] == "patch" and cause["message"].endswith('strict decoding error: unknown field "bogus"')
        assert r.json()["message"].startswith(' "" is invalid: patch: Invalid value: "{')
        r = await c.patch(f"{server.rbac}/clusterroles/c", json={"bogus": 1}, headers=STRATEGIC, params=strict)
        assert r.status_code == 422
        assert r.json()["message"] == (' "" is invalid: patch: Invalid value: "map[bogus:1]": strict decoding '
                                       'error: unknown field "bogus"')


async def test_wrong_type_inside_a_merge_patch_is_422(server):
    async with server.client() as c:
        await ok(await c.post(f"{server.rbac}/clusterroles", json=cluster_role(server)), 201)
        r = await c.patch(f"{server.rbac}/clusterroles/c", json={"rules": [{"verbs": "get"}]}, headers=MERGE)
        assert r.status_code == 422 and r.json()["reason"] == "Invalid"
        (cause,) = r.json()["details"]["causes"]
        assert cause["field"] == "patch"
        assert cause["message"].endswith("json: cannot unmarshal string into Go struct field PolicyRule.rules.verbs "
                                         "of type []string")
        # The same body in a POST is a 400 (the decoder's).
        bad = dict(cluster_role(server, "x"), rules=[{"verbs": "get"}])
        assert (await c.post(f"{server.rbac}/clusterroles", json=bad)).status_code == 400
