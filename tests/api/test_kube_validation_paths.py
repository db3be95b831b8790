"""Validation causes carry the field paths and values Kubernetes' validation writes (issue 16)."""

from __future__ import annotations

from tests.support.rbac import ok


def causes(r) -> list[tuple[str, str]]:
    assert r.status_code == 422, r.text
    return [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]


async def test_bad_generate_name_is_reported_at_metadata_generate_name(server):
    async with server.client() as c:
        r = await c.post("/api/v1/namespaces", json={"metadata": {"generateName": "Bad-"}})
        fields = [f for f, _ in causes(r)]
        assert fields[0] == "metadata.generateName"
        assert causes(r)[0][1].startswith('Invalid value: "Bad-": a lowercase RFC 1123 label')


async def test_bad_namespace_finalizer_is_reported_at_spec_finalizers(server):
    async with server.client() as c:
        r = await c.post("/api/v1/namespaces", json={"metadata": {"name": "f"}, "spec": {"finalizers": ["nope"]}})
        assert causes(r) == [("spec.finalizers", 'Invalid value: "nope": name is neither a standard finalizer name '
                                                 "nor is it fully qualified")]


async def test_bad_metadata_finalizer_is_reported_at_metadata_finalizers(server):
    async with server.client() as c:
        r = await c.post(f"{server.rbac}/clusterroles", json={"metadata": {"name": "f", "finalizers": ["a/b/c"]}})
        assert [f for f, _ in causes(r)] == ["metadata.finalizers"]


async def test_bad_aggregation_selector_is_reported_at_the_selector(server):
    async with server.client() as c:
        body = {"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "k", "operator": "Near"}]}]}}
        r = await c.post(f"{server.rbac}/clusterroles", json=body)
        assert causes(r) == [
            ("aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator",
             'Invalid value: "Near": not a valid selector operator'),
            ("aggregationRule.clusterRoleSelectors[0]", 'Invalid value: "null": invalid label selector.')]


async def test_dns_label_names_refuse_a_trailing_newline(server):
    async with server.client() as c:
        r = await c.post("/api/v1/namespaces", json={"metadata": {"name": "ok\n"}})
        assert causes(r)[0][0] == "metadata.name" and causes(r)[0][1].startswith('Invalid value: "ok\\n": ')


async def test_non_ascii_bad_values_are_printed_as_go_quotes_them(server):
    async with server.client() as c:
        r = await c.post("/api/v1/namespaces", json={"metadata": {"name": "café"}})
        assert causes(r)[0][1].startswith('Invalid value: "café": a lowercase RFC 1123 label')
        assert '"café"' in r.json()["message"]


async def test_lease_rules_are_reported_at_their_spec_fields(server):
    async with server.client() as c:
        await ok(await c.post("/api/v1/namespaces", json={"metadata": {"name": "l"}}), 201)
        body = {"metadata": {"name": "lock"}, "spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}}
        r = await c.post(f"/apis/coordination.{server.domain}/v1/namespaces/l/leases", json=body)
        assert causes(r) == [("spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0"),
                             ("spec.leaseTransitions", "Invalid value: -1: must be greater than or equal to 0")]
