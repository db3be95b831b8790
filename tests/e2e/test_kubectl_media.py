"""The real kubectl on media types: server-side Table columns, explain from OpenAPI, v2 validation, --raw."""

from __future__ import annotations

import json

import yaml

SAR = """apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: alice
  resourceAttributes: {verb: get, resource: namespaces}
"""


def header(out: str) -> list[str]:
    """The column titles of kubectl's table output (titles have single spaces, columns wider gaps)."""
    return [title.strip() for title in out.splitlines()[0].split("  ") if title.strip()]


async def test_get_clusterroles_prints_the_servers_table_columns(kubectl):
    result = await kubectl("get", "clusterroles", "-v=6")
    assert header(result.out) == ["NAME", "CREATED AT"]  # kubectl alone would print NAME and AGE
    rows = [line.split() for line in result.out.splitlines()[1:]]
    assert ["cluster-admin"] == [r[0] for r in rows if r[0] == "cluster-admin"]
    assert all(r[1].endswith("Z") for r in rows)  # the Created At cells are RFC 3339 dates


async def test_get_clusterrolebindings_wide_shows_the_subject_columns(kubectl):
    result = await kubectl("get", "clusterrolebindings", "-o", "wide")
    assert header(result.out) == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    row = next(line.split() for line in result.out.splitlines() if line.startswith("cluster-admin "))
    assert row[1] == "ClusterRole/cluster-admin" and "system:masters" in row
    assert header((await kubectl("get", "clusterrolebindings")).out) == ["NAME", "ROLE", "AGE"]


async def test_get_rolebindings_across_namespaces_prints_each_rows_namespace(kubectl):
    await kubectl("create", "namespace", "team")
    await kubectl("create", "rolebinding", "rb", "-n", "team", "--clusterrole=view", "--user=alice",
                  "--serviceaccount=team:robot")
    result = await kubectl("get", "rolebindings", "-A", "-o", "wide")
    assert header(result.out)[:3] == ["NAMESPACE", "NAME", "ROLE"]
    row = next(line.split() for line in result.out.splitlines() if " rb " in f" {line} ")
    assert row[:3] == ["team", "rb", "ClusterRole/view"] and "alice" in row and "team/robot" in row


async def test_get_namespaces_shows_their_status(kubectl):
    out = (await kubectl("get", "namespaces")).out
    assert header(out) == ["NAME", "STATUS", "AGE"]
    assert next(line.split() for line in out.splitlines() if line.startswith("default "))[1] == "Active"


async def test_explain_prints_field_descriptions_from_openapi_v3(kubectl):
    rules = (await kubectl("explain", "clusterrole.rules")).out
    assert "FIELD: rules <[]PolicyRule>" in rules and "verbs\t<[]string> -required-" in rules
    verbs = (await kubectl("explain", "clusterrole.rules.verbs")).out
    assert "DESCRIPTION:" in verbs and "verbs" in verbs.lower()
    subject = (await kubectl("explain", "clusterrolebinding.subjects.namespace")).out
    assert "Namespace of the referenced object" in subject


async def test_explain_configmap_and_secret_fields_as_kube_documents_them(kubectl):
    data = (await kubectl("explain", "configmap.data")).out
    assert "FIELD: data <map[string]string>" in data and "Data contains the configuration data." in data
    binary = (await kubectl("explain", "cm.binaryData")).out
    assert "FIELD: binaryData <map[string]string>" in binary
    strings = (await kubectl("explain", "secret.stringData", "--output=plaintext-openapiv2")).out
    assert "stringData allows specifying non-binary secret data in string form" in strings


async def test_explain_from_openapi_v2_in_protobuf(kubectl):
    out = (await kubectl("explain", "subjectaccessreview.spec", "--output=plaintext-openapiv2")).out
    assert "SubjectAccessReviewSpec is a description of the access request" in out
    assert "resourceAttributes" in out


async def test_create_f_of_a_review_is_validated_against_openapi_v2(kubectl, tmp_path):
    good = tmp_path / "sar.yaml"
    good.write_text(SAR)
    created = yaml.safe_load((await kubectl("create", "-f", str(good), "-o", "yaml", "-v=6")).out)
    assert created["kind"] == "SubjectAccessReview" and created["status"]["allowed"] is False
    bad = tmp_path / "bad.yaml"
    bad.write_text(SAR.replace("  user: alice\n", "  user: alice\n  bogus: 1\n"))
    result = await kubectl("create", "-f", str(bad), check=False)
    assert result.code != 0 and 'unknown field "bogus"' in result.err


async def test_get_raw_answers_json_documents(kubectl):
    listed = json.loads((await kubectl("get", "--raw", "/apis/rbac.authorization.k8s.io/v1/clusterroles")).out)
    assert listed["kind"] == "ClusterRoleList" and listed["items"]
    v2 = json.loads((await kubectl("get", "--raw", "/openapi/v2")).out)
    assert v2["swagger"] == "2.0" and "io.k8s.api.rbac.v1.ClusterRole" in v2["definitions"]
    index = json.loads((await kubectl("get", "--raw", "/openapi/v3")).out)
    pinned = index["paths"]["apis/rbac.authorization.k8s.io/v1"]["serverRelativeURL"]
    assert json.loads((await kubectl("get", "--raw", pinned)).out)["openapi"] == "3.0.0"
    pretty = (await kubectl("get", "--raw", "/api/v1/namespaces/default?pretty=true")).out
    assert pretty.startswith('{\n  "') and json.loads(pretty)["kind"] == "Namespace"


async def test_get_clusterroles_under_the_svc_io_domain_uses_the_servers_columns(kubectl_svc):
    assert header((await kubectl_svc("get", "clusterroles")).out) == ["NAME", "CREATED AT"]
