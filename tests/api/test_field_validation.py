"""Field validation (fieldValidation=Ignore|Warn|Strict) on POST, PUT and PATCH."""

from __future__ import annotations

import json

import pytest

RULES = [{"verbs": ["get"], "apiGroups": [""], "resources": ["namespaces"]}]


def cr(server, name: str = "reader", **extra) -> dict:
    body = {"apiVersion": f"rbac.authorization.{server.domain}/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": json.loads(json.dumps(RULES))}
    body.update(extra)
    return body


def with_unknown_fields(server) -> dict:
    body = cr(server)
    body["spec"] = {"foo": 1}
    body["metadata"]["colour"] = "blue"
    body["rules"][0]["bogus"] = True
    return body


UNKNOWN = ['unknown field "metadata.colour"', 'unknown field "rules[0].bogus"', 'unknown field "spec"']


def warnings(r) -> list[str]:
    return r.headers.get_list("warning")


async def test_warn_is_the_default_and_answers_one_warning_header_per_unknown_field(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=with_unknown_fields(server))
        assert r.status_code == 201, r.text
        assert sorted(warnings(r)) == sorted(f'299 - {json.dumps(w)}' for w in UNKNOWN)
        assert '299 - "unknown field \\"rules[0].bogus\\""' in warnings(r)


async def test_unknown_fields_are_never_stored(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=with_unknown_fields(server))
        stored = (await c.get(f"{server.rbac}/clusterroles/reader")).json()
        assert "spec" not in stored and "colour" not in stored["metadata"] and stored["rules"] == RULES


async def test_strict_fails_with_400_listing_every_unknown_field(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", params={"fieldValidation": "Strict"},
                         json=with_unknown_fields(server))
        assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
        message = r.json()["message"]
        assert message.startswith('ClusterRole in version "v1" cannot be handled as a ClusterRole: '
                                  "strict decoding error: ")
        assert all(w in message for w in UNKNOWN)
        assert (await c.get(f"{server.rbac}/clusterroles/reader")).status_code == 404


async def test_ignore_drops_unknown_fields_silently(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", params={"fieldValidation": "Ignore"},
                         json=with_unknown_fields(server))
        assert r.status_code == 201 and warnings(r) == []
        assert "spec" not in r.json()


async def test_a_known_body_earns_no_warning(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        assert r.status_code == 201 and warnings(r) == []


async def test_duplicate_json_field_is_reported_with_its_path(server):
    raw = ('{"apiVersion":"rbac.authorization.%s/v1","kind":"ClusterRole","metadata":{"name":"reader",'
           '"labels":{"a":"1","a":"2"}},"rules":[{"verbs":["get"],"verbs":["list"],"resources":["x"],'
           '"apiGroups":[""]}]}') % server.domain
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", content=raw, headers={"Content-Type": "application/json"})
        assert r.status_code == 201, r.text
        assert sorted(warnings(r)) == ['299 - "duplicate field \\"metadata.labels.a\\""',
                                       '299 - "duplicate field \\"rules[0].verbs\\""']
        strict = await c.post(f"{server.rbac}/clusterroles", params={"fieldValidation": "Strict"}, content=raw,
                              headers={"Content-Type": "application/json"})
        assert strict.status_code == 400
        assert 'duplicate field "metadata.labels.a"' in strict.json()["message"]


async def test_duplicate_yaml_field_is_reported_with_its_path(server):
    raw = (f"apiVersion: rbac.authorization.{server.domain}/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n"
           "  name: reader\nrules: []\n")
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", params={"fieldValidation": "Strict"}, content=raw,
                         headers={"Content-Type": "application/yaml"})
        assert r.status_code == 400
        assert r.json()["message"].endswith('strict decoding error: duplicate field "metadata.name"')


@pytest.mark.parametrize("level", ["Ignore", "Warn", "Strict"])
async def test_a_fatal_type_error_is_400_reporting_only_that_error_at_every_level(server, level):
    body = with_unknown_fields(server)
    body["metadata"]["generation"] = "one"  # a string for an integer
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", params={"fieldValidation": level}, json=body)
        assert r.status_code == 400 and warnings(r) == []
        assert r.json()["message"] == ('ClusterRole in version "v1" cannot be handled as a ClusterRole: json: '
                                       "cannot unmarshal string into Go struct field ObjectMeta.metadata.generation "
                                       "of type int64")


async def test_a_nested_type_error_names_the_innermost_struct(server):
    body = cr(server)
    body["rules"][0]["verbs"] = "get"
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json=body)
        assert r.status_code == 400
        assert r.json()["message"].endswith("json: cannot unmarshal string into Go struct field PolicyRule.rules.verbs "
                                            "of type []string")


async def test_put_validates_fields(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        r = await c.put(f"{server.rbac}/clusterroles/reader", json=with_unknown_fields(server))
        assert r.status_code == 200 and sorted(warnings(r)) == sorted(f"299 - {json.dumps(w)}" for w in UNKNOWN)
        strict = await c.put(f"{server.rbac}/clusterroles/reader", params={"fieldValidation": "Strict"},
                             json=with_unknown_fields(server))
        assert strict.status_code == 400


@pytest.mark.parametrize("content_type,patch", [
    ("application/merge-patch+json", {"metadata": {"colour": "blue"}}),
    ("application/strategic-merge-patch+json", {"metadata": {"colour": "blue"}}),
    ("application/json-patch+json", [{"op": "add", "path": "/metadata/colour", "value": "blue"}]),
])
async def test_patch_validates_the_fields_of_the_patched_object(server, content_type, patch):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        url = f"{server.rbac}/clusterroles/reader"
        headers = {"Content-Type": content_type}
        r = await c.patch(url, content=json.dumps(patch), headers=headers)
        assert r.status_code == 200 and warnings(r) == ['299 - "unknown field \\"metadata.colour\\""']
        assert "colour" not in (await c.get(url)).json()["metadata"]
        strict = await c.patch(url, params={"fieldValidation": "Strict"}, content=json.dumps(patch), headers=headers)
        # Kubernetes' patchers answer a strict decoding error as 422 (`patch: Invalid value: ...`); POST/PUT 400.
        assert strict.status_code == 422 and 'unknown field "metadata.colour"' in strict.json()["message"]
        ignored = await c.patch(url, params={"fieldValidation": "Ignore"}, content=json.dumps(patch), headers=headers)
        assert ignored.status_code == 200 and warnings(ignored) == []


async def test_apply_validates_the_fields_of_the_configuration(server):
    async with server.client() as c:
        config = with_unknown_fields(server)
        headers = {"Content-Type": "application/apply-patch+yaml"}
        url = f"{server.rbac}/clusterroles/reader"
        strict = await c.patch(url, params={"fieldManager": "m", "fieldValidation": "Strict"},
                               content=json.dumps(config), headers=headers)
        assert strict.status_code == 400
        r = await c.patch(url, params={"fieldManager": "m"}, content=json.dumps(config), headers=headers)
        assert r.status_code == 201 and sorted(warnings(r)) == sorted(f"299 - {json.dumps(w)}" for w in UNKNOWN)
        assert "spec" not in r.json()


async def test_json_patch_operation_with_an_unknown_key_is_reported(server):
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        patch = [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}, "valu": 1}]
        r = await c.patch(f"{server.rbac}/clusterroles/reader", content=json.dumps(patch),
                          headers={"Content-Type": "application/json-patch+json"})
        assert r.status_code == 200 and warnings(r) == ['299 - "json patch unknown field \\"[0].valu\\""']


async def test_patch_with_a_type_error_and_an_unknown_field_is_400(server):
    # The spec (field validation 4): an unknown field with another error is 400 whatever the level
    # (a type error alone is 422, as Kubernetes' patchers: tests/api/test_kube_writes.py).
    async with server.client() as c:
        await c.post(f"{server.rbac}/clusterroles", json=cr(server))
        r = await c.patch(f"{server.rbac}/clusterroles/reader", content='{"metadata":{"labels":{"a":1},"x":2}}',
                          headers={"Content-Type": "application/merge-patch+json"})
        assert r.status_code == 400 and warnings(r) == []
        assert r.json()["message"].endswith("cannot unmarshal number into Go struct field ObjectMeta.metadata.labels "
                                            "of type string")


async def test_unsupported_field_validation_value_is_422(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", params={"fieldValidation": "Loud"}, json=cr(server))
        assert r.status_code == 422
        assert r.json()["message"] == ('CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
                                       '"Loud": supported values: "", "Ignore", "Strict", "Warn"')
        r = await c.put(f"{server.rbac}/clusterroles/reader", params={"fieldValidation": "Loud"}, json=cr(server))
        assert r.status_code == 422 and r.json()["message"].startswith("UpdateOptions.meta.k8s.io")
