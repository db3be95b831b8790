"""Hostile input, proven by property-based tests over every decoder, through the in-process app.

One control plane (in process, CBOR enabled) serves a whole module of
Hypothesis examples from a thread of its own (`tests.support.threaded`).
Each example is one request, and each answer must be safe:

- never a 5xx, never a stack trace in the body;
- an error is a `Status` whose `code` is the HTTP status;
- a refused request writes nothing: the store's revision is where it was
  (no partial write); after each test every object still reads back, in
  JSON and in Protobuf.

Decoders: JSON, YAML, CBOR and Protobuf bodies (random bytes, and
well-formed documents of random shape aimed at real kinds), the four patch
types, label and field selectors, and query parameters. Bounded: a fixed
number of examples per test, derandomized (the same examples in every run),
no database. The explicit cases the issue names (names with `..`, `%2F`,
NUL and long segments, invalid UTF-8, numbers past 2^63, YAML anchors) are
examples here too (billion laughs: `tests/unit/api/test_codecs.py`); connection-level hostility (slow bodies, half-open
connections, bodies past the limit) is in `test_hostile_connections.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import cbor2
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.machinery.serializer import protobuf
from runtime.machinery.serializer.proto import runtime_pb2
from tests.support.threaded import Answer, ThreadedPlane

RBAC = "rbac.authorization.k8s.io/v1"
ROLES = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
SAS = "/api/v1/namespaces/default/serviceaccounts"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
PB = "application/vnd.kubernetes.protobuf"

EXAMPLES = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    tmp: Path = tmp_path_factory.mktemp("hostile")
    with ThreadedPlane(tmp, api_domain="k8s.io",
                       feature_gates={"CBORServingAndStorage": True}) as plane:
        for path, body in ((ROLES, role("target")), (CLUSTER_ROLES, {**role("target"), "kind": "ClusterRole"}),
                           (LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                     "metadata": {"name": "target"}, "spec": {}}),
                           (SAS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "target"}})):
            assert plane.request("POST", path, json=body).status_code == 201
        yield plane
        everything_reads_back(plane)


def role(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": name},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], **extra}


def safe(plane: ThreadedPlane, method: str, path: str, **kwargs: Any) -> Answer:
    """Send one request; assert the answer is safe (see the module doc)."""
    before = plane.revision()
    answer = plane.request(method, path, **kwargs)
    text = answer.text
    assert answer.status_code < 500, f"{method} {path}: {answer.status_code} {text[:400]}"
    assert "Traceback" not in text and 'File "/' not in text, text[:400]
    if answer.status_code >= 400:
        assert plane.revision() == before, f"{method} {path} answered {answer.status_code} but wrote"
        if answer.headers.get("content-type", "").startswith("application/json"):
            status = json.loads(answer.content)
            assert status["kind"] == "Status" and status["code"] == answer.status_code, text[:400]
    return answer


def everything_reads_back(plane: ThreadedPlane) -> None:
    """Every object of every kind listed, in JSON and in Protobuf where the kind has one."""
    for path in (ROLES, CLUSTER_ROLES, LEASES, SAS, "/api/v1/namespaces"):
        listed = plane.request("GET", path)
        assert listed.status_code == 200, listed.text[:400]
        items = json.loads(listed.content)["items"]
        assert items or path not in (CLUSTER_ROLES, "/api/v1/namespaces"), path  # bootstrapped: never empty
        for item in items:
            name = item["metadata"]["name"]
            api_version = json.loads(listed.content)["apiVersion"]
            kind = json.loads(listed.content)["kind"].removesuffix("List")
            for accept in ("application/json", PB) if protobuf.supports(api_version, kind) else ("application/json",):
                got = plane.request("GET", f"{path}/{quote(name, safe='')}", headers={"Accept": accept})
                assert got.status_code == 200, (name, accept, got.text[:300])


# ---- strategies ---------------------------------------------------------------------------------

HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["..", "%2F", "a/b", "\x00", "a\x00b", "\ud7ff", "x" * 300, "x" * 70_000, "-", "A", " ",
                     "\u202e", "é", "🙂", "${jndi:x}", "<script>", "' OR 1=1 --", "%00", "%ff", "\\", "*"]),
)
#: What fits in a URL (httpx refuses a path or query past 64 KiB; Hypercorn's head limit is 16 KiB anyway).
URL_TEXT = HOSTILE_TEXT.filter(lambda t: len(t) < 4000)
BIG_NUMBERS = st.sampled_from([2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**40, 1e308, -1e308, 0.5, -0.0])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), BIG_NUMBERS, st.floats(allow_nan=False), HOSTILE_TEXT)
FIELDS = st.sampled_from(["apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations",
                          "finalizers", "ownerReferences", "managedFields", "rules", "verbs", "apiGroups",
                          "resources", "resourceNames", "nonResourceURLs", "roleRef", "subjects", "spec",
                          "status", "leaseDurationSeconds", "holderIdentity", "secrets", "generation",
                          "resourceVersion", "uid", "deletionTimestamp", "creationTimestamp", "$patch",
                          "$retainKeys", "$setElementOrder/rules", "$deleteFromPrimitiveList/finalizers",
                          "generateName", "aggregationRule", "expirationSeconds", "audiences", "user"])
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(FIELDS, st.text(max_size=10)), inner, max_size=5)),
    max_leaves=25)
METADATA = st.fixed_dictionaries({"name": HOSTILE_TEXT}, optional={
    "namespace": HOSTILE_TEXT, "labels": st.dictionaries(HOSTILE_TEXT, HOSTILE_TEXT, max_size=3),
    "annotations": st.dictionaries(HOSTILE_TEXT, JSON_VALUES, max_size=2), "finalizers": JSON_VALUES,
    "ownerReferences": JSON_VALUES, "generation": BIG_NUMBERS, "resourceVersion": HOSTILE_TEXT,
    "uid": HOSTILE_TEXT, "managedFields": JSON_VALUES, "deletionGracePeriodSeconds": BIG_NUMBERS,
})
#: A body aimed at one kind: its apiVersion and kind, a hostile metadata, random fields of the kind's names.
TARGETS = [(ROLES, RBAC, "Role"), (CLUSTER_ROLES, RBAC, "ClusterRole"), (LEASES, "coordination.k8s.io/v1", "Lease"),
           (SAS, "v1", "ServiceAccount"), (SAR, "authorization.k8s.io/v1", "SubjectAccessReview"),
           (f"{SAS}/target/token", "authentication.k8s.io/v1", "TokenRequest")]
OBJECTS = st.builds(
    lambda target, meta, rest: (target[0], {"apiVersion": target[1], "kind": target[2], "metadata": meta, **rest}),
    st.sampled_from(TARGETS), METADATA, st.dictionaries(FIELDS, JSON_VALUES, max_size=4))


def _cbor_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(SCALARS, st.binary(max_size=16), st.just(cbor2.undefined),
                       st.builds(cbor2.CBORTag, st.integers(0, 2**64 - 1), SCALARS))
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(FIELDS, st.integers(), st.binary(max_size=4)),
                                                     inner, max_size=4),
        st.builds(cbor2.CBORTag, st.integers(0, 2**64 - 1), inner)), max_leaves=20)


# ---- bodies -------------------------------------------------------------------------------------

@EXAMPLES
@given(target=st.sampled_from([ROLES, CLUSTER_ROLES, f"{ROLES}/target", SAR, f"{SAS}/target/token", LEASES]),
       method=st.sampled_from(["POST", "PUT"]),
       media=st.sampled_from(["application/json", "application/yaml", "application/cbor", PB,
                              "application/apply-patch+yaml", "text/plain", ""]),
       body=st.binary(max_size=2048))
def test_random_bytes_in_any_media_type_are_answered_safely(plane, target, method, media, body):
    safe(plane, method, target, content=body, headers={"Content-Type": media})


@EXAMPLES
@given(aimed=OBJECTS, method=st.sampled_from(["POST", "PUT"]))
def test_json_documents_of_random_shape_are_answered_safely(plane, aimed, method):
    path, body = aimed
    if method == "PUT" and not path.endswith("/token"):
        path = f"{path}/{quote(body['metadata']['name'][:4000], safe='')}"
    safe(plane, method, path, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


@EXAMPLES
@given(aimed=OBJECTS, anchors=st.booleans())
def test_yaml_documents_with_anchors_tags_and_random_shape_are_answered_safely(plane, aimed, anchors):
    path, body = aimed
    text = yaml.safe_dump(body, allow_unicode=True)
    if anchors:  # an anchor on the metadata, aliased where a list of rules belongs, and an unsafe tag
        text = text.replace("metadata:", "metadata: &meta", 1) + "rules: *meta\nextra: !!python/object:os.system x\n"
    safe(plane, "POST", path, content=text.encode(), headers={"Content-Type": "application/yaml"})


@EXAMPLES
@given(aimed=OBJECTS, value=_cbor_values(), where=st.sampled_from(["root", "metadata", "rules", "spec"]))
def test_cbor_documents_with_tags_and_random_shape_are_answered_safely(plane, aimed, value, where):
    path, body = aimed
    document: Any = value if where == "root" else {**body, where: value}
    safe(plane, "POST", path, content=b"\xd9\xd9\xf7" + cbor2.dumps(document),
         headers={"Content-Type": "application/cbor"})


@EXAMPLES
@given(cut=st.integers(0, 400), flips=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=6),
       insert=st.binary(max_size=8), kind=st.sampled_from(sorted(protobuf.SUPPORTED_KINDS)))
def test_protobuf_bodies_truncated_mutated_or_of_another_kind_are_answered_safely(plane, cut, flips, insert, kind):
    good = bytearray(protobuf.encode(role("pb", metadata={"name": "pb", "labels": {"a": "b"}})))
    for at, byte in flips:
        if at < len(good):
            good[at] = byte
    data = bytes(good[:cut]) + insert + bytes(good[cut:])
    safe(plane, "POST", ROLES, content=data, headers={"Content-Type": PB})
    truncated = bytes(good[:4]) + bytes(good[4:cut])
    other = protobuf.PROTOBUF_PREFIX + runtime_pb2.Unknown(  # another kind's envelope around random bytes
        typeMeta=runtime_pb2.TypeMeta(apiVersion=RBAC, kind=kind), raw=insert + bytes(good[4:cut])).SerializeToString()
    for body in (truncated, other):
        safe(plane, "POST", ROLES, content=body, headers={"Content-Type": PB})


# ---- patches ------------------------------------------------------------------------------------

JSON_PATCH_OPS = st.lists(st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"])},
    optional={"path": st.one_of(st.sampled_from(["/metadata/labels/a", "/rules/0", "/rules/-", "/metadata",
                                                 "/rules/99999999999999999999", "/rules/-1", "/~2", "", "/",
                                                 "/metadata/name", "/kind", "/rules/0/verbs/0"]), HOSTILE_TEXT),
              "from": st.sampled_from(["/rules/0", "/metadata/labels", "/nope", ""]),
              "value": JSON_VALUES}), max_size=5)


@EXAMPLES
@given(kind=st.sampled_from(["application/json-patch+json", "application/merge-patch+json",
                             "application/strategic-merge-patch+json", "application/apply-patch+yaml",
                             "application/apply-patch+cbor"]),
       body=st.one_of(JSON_VALUES, JSON_PATCH_OPS, st.dictionaries(FIELDS, JSON_VALUES, max_size=4)),
       target=st.sampled_from([f"{ROLES}/target", f"{CLUSTER_ROLES}/target", f"{LEASES}/target",
                               f"{SAS}/target", f"{ROLES}/ghost"]),
       manager=st.one_of(st.none(), URL_TEXT))
def test_the_four_patch_types_with_random_bodies_are_answered_safely(plane, kind, body, target, manager):
    content = cbor2.dumps(body) if kind.endswith("cbor") else json.dumps(body).encode()
    params = {"fieldManager": manager} if manager is not None else {}
    safe(plane, "PATCH", target, content=content, headers={"Content-Type": kind},
         params={k: v.replace("\x00", "") for k, v in params.items()})


# ---- selectors and query parameters ------------------------------------------------------------

SELECTOR_TEXT = st.lists(st.sampled_from(list("abz019=!,()/.-_ \t~\x00é") + [" in ", " notin ", "==", "!="]),
                         max_size=30).map("".join)


@EXAMPLES
@given(labels=st.one_of(SELECTOR_TEXT, URL_TEXT), fields=st.one_of(SELECTOR_TEXT, URL_TEXT),
       path=st.sampled_from([ROLES, CLUSTER_ROLES, "/apis/rbac.authorization.k8s.io/v1/roles", SAS, LEASES]),
       watch=st.booleans())
def test_label_and_field_selectors_of_any_text_are_answered_safely(plane, labels, fields, path, watch):
    params = {"labelSelector": labels.replace("\x00", "%00"), "fieldSelector": fields.replace("\x00", "%00")}
    if watch:
        params.update(watch="true", timeoutSeconds="1")
    safe(plane, "GET", path, params=params)
    # deletecollection by selector, where nothing lives (a refusal deletes nothing; a match deletes nothing needed)
    safe(plane, "DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/trash/roles", params=params)


PARAMS = st.dictionaries(
    st.one_of(st.sampled_from(["limit", "continue", "resourceVersion", "resourceVersionMatch", "timeoutSeconds",
                               "fieldValidation", "dryRun", "propagationPolicy", "gracePeriodSeconds",
                               "orphanDependents", "pretty", "watch", "allowWatchBookmarks", "sendInitialEvents",
                               "fieldManager", "force", "labelSelector", "fieldSelector"]), st.text(max_size=8)),
    st.one_of(URL_TEXT, st.sampled_from(["-1", "0", "1", str(2**63), str(2**64), "1e9", "true", "All",
                                             "Strict", "Exact", "NotOlderThan", "Foreground", "Orphan"]))
    .map(lambda v: v.replace("\x00", "%00")), max_size=5)


@EXAMPLES
@given(params=PARAMS, call=st.sampled_from([("GET", ROLES), ("GET", f"{ROLES}/target"), ("POST", ROLES),
                                            ("DELETE", f"{ROLES}/missing"), ("PUT", f"{ROLES}/target"),
                                            ("GET", "/api/v1/namespaces"), ("POST", f"{SAS}/target/token")]))
def test_query_parameters_of_any_value_are_answered_safely(plane, params, call):
    method, path = call
    body = None
    if method in ("POST", "PUT"):
        body = json.dumps(role("target") if not path.endswith("/token") else {"spec": {}}).encode()
    if params.get("watch") is not None:
        params["timeoutSeconds"] = "1"
    safe(plane, method, path, params=params, content=body, headers={"Content-Type": "application/json"})


# ---- the cases the issue names ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["..", ".", "%2F", "a%2Fb", "a/b", "%00", "a\x00b", "x" * 254, "x" * 60_000,
                                  "%ff", "ünïcode", "a b", "-a", "a-", ""])
def test_hostile_names_in_paths_and_bodies_are_refused_and_write_nothing(plane, name):
    # ServiceAccount names are DNS subdomains: every one of these is refused, wherever it is written. In a
    # path, dots are escaped (a client would resolve a literal `..` segment away before sending it).
    for escaped in {name.replace("\x00", "%00").replace(".", "%2E"), quote(name, safe="").replace(".", "%2E")}:
        calls = [("POST", SAS)] if not name else [  # no name in a path is the collection itself
            ("GET", f"{SAS}/{escaped}"), ("DELETE", f"{SAS}/{escaped}"), ("PUT", f"{SAS}/{escaped}"), ("POST", SAS),
            ("POST", f"{SAS}/{escaped}/token")]
        for method, path in calls:
            body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
            content = json.dumps(body if not path.endswith("/token") else {}).encode() if method != "GET" else None
            answer = safe(plane, method, path, content=content, headers={"Content-Type": "application/json"})
            assert answer.status_code >= 400, (method, path[:80], answer.status_code)


@pytest.mark.parametrize("body", [b'{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":'
                                  b'{"name":"\xc3\x28"}}', b"\xff\xfe\xfd", b'{"metadata":{"name":"\xed\xa0\x80"}}'])
def test_invalid_utf8_in_bodies_and_queries_is_refused(plane, body):
    assert safe(plane, "POST", ROLES, content=body, headers={"Content-Type": "application/json"}).status_code in (400,
                                                                                                               422)
    assert safe(plane, "GET", ROLES + "?labelSelector=%C3%28").status_code == 400


@pytest.mark.parametrize("field,value", [
    ("spec.leaseDurationSeconds", 2**31), ("spec.leaseDurationSeconds", 2**63), ("spec.leaseTransitions", -(2**64)),
    ("metadata.deletionGracePeriodSeconds", 2**63), ("metadata.generation", 10**30),
])
def test_numbers_past_their_go_type_are_400_in_gos_words(plane, field, value):
    section, key = field.split(".")
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"generateName": "n"}, "spec": {}}
    body[section][key] = value
    answer = safe(plane, "POST", LEASES, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    width = "int32" if section == "spec" else "int64"
    assert f"json: cannot unmarshal number {value} into Go struct field" in answer.text and f"of type {width}" in answer.text
