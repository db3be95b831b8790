"""The four access reviews (and who may create them), through real HTTPS.

SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview and
SelfSubjectRulesReview are evaluated by the same RBAC authorizer that guards
every request, and never stored. Token users come from `--token-auth-file`.
"""

from __future__ import annotations

import pytest

from tests.support.rbac import bind, grant, namespaces, ok, rule, token_file, user
from tests.support.server import Server, start_in_process


@pytest.fixture
async def srv(nursery, tmp_path) -> Server:
    return await start_in_process(nursery, tmp_path, token_auth_file=token_file(tmp_path))


def res(**attrs) -> dict:
    return {"resourceAttributes": attrs}


async def review(srv: Server, spec: dict, *, token: str | None = "admin", kind: str = "subjectaccessreviews",
                 namespace: str = "", code: int = 201, **meta) -> dict:
    path = f"{srv.authz}/namespaces/{namespace}/{kind}" if namespace else f"{srv.authz}/{kind}"
    body: dict = {"spec": spec}
    if meta:
        body["metadata"] = meta
    async with srv.client(token=token) as c:
        r = await c.post(path, json=body)
    assert r.status_code == code, r.text
    return r.json()


# ---- SubjectAccessReview -------------------------------------------------------------------------

async def test_allowed_names_the_binding_role_and_subject(srv):
    await grant(srv, user("alice"), rule(["get"], ["roles"], ["*"]), name="readers")
    got = await review(srv, {"user": "alice", **res(verb="get", resource="roles", group="x", namespace="a")})
    assert got["kind"] == "SubjectAccessReview"
    assert got["status"] == {
        "allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "readers" of ClusterRole "readers" '
                                   'to User "alice"'}


async def test_allowed_by_a_rolebinding_names_it_with_its_namespace(srv):
    await namespaces(srv, "a")
    await grant(srv, user("alice"), rule(["get"], ["roles"], ["*"]), namespace="a", name="r")
    got = await review(srv, {"user": "alice", **res(verb="get", resource="roles", group="g", namespace="a")})
    assert got["status"]["reason"] == 'RBAC: allowed by RoleBinding "r/a" of ClusterRole "r" to User "alice"'


async def test_no_opinion_is_allowed_false_with_denied_unset(srv):
    got = await review(srv, {"user": "alice", **res(verb="delete", resource="roles", namespace="a")})
    assert got["status"] == {"allowed": False}


async def test_a_user_without_groups_belongs_to_no_group(srv):
    spec = res(verb="create", resource="selfsubjectaccessreviews", group=f"authorization.{srv.domain}")
    alone = await review(srv, {"user": "alice", **spec})
    member = await review(srv, {"user": "alice", "groups": ["system:authenticated"], **spec})
    assert (alone["status"]["allowed"], member["status"]["allowed"]) == (False, True)


async def test_groups_alone_may_be_asked_about(srv):
    got = await review(srv, {"groups": ["system:masters"], **res(verb="delete", resource="anything")})
    assert got["status"]["allowed"] is True


async def test_empty_namespace_of_a_namespaced_resource_means_all_namespaces(srv):
    await namespaces(srv, "a")
    await grant(srv, user("alice"), rule(["list"], ["roles"], ["*"]), namespace="a")
    await grant(srv, user("bob"), rule(["list"], ["roles"], ["*"]))
    everywhere = res(verb="list", resource="roles", group="g")
    assert (await review(srv, {"user": "alice", **everywhere}))["status"]["allowed"] is False
    assert (await review(srv, {"user": "alice", **res(verb="list", resource="roles", group="g", namespace="a")})
            )["status"]["allowed"] is True
    assert (await review(srv, {"user": "bob", **everywhere}))["status"]["allowed"] is True


async def test_non_resource_attributes_are_judged_on_path_and_verb(srv):
    anon = ["system:unauthenticated"]
    assert (await review(srv, {"user": "system:anonymous", "groups": anon,
                               "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}))["status"]["allowed"]
    denied = await review(srv, {"user": "system:anonymous", "groups": anon,
                                "nonResourceAttributes": {"path": "/apis", "verb": "get"}})
    assert denied["status"]["allowed"] is False


async def test_both_resource_and_non_resource_attributes_is_invalid(srv):
    got = await review(srv, {"user": "alice", **res(verb="get"), "nonResourceAttributes": {"path": "/", "verb": "get"}},
                       code=422)
    assert got["reason"] == "Invalid"
    assert got["details"]["causes"][0]["field"] == "spec.nonResourceAttributes"
    assert "cannot be specified in combination with resourceAttributes" in got["message"]


async def test_neither_resource_nor_non_resource_attributes_is_invalid(srv):
    got = await review(srv, {"user": "alice"}, code=422)
    # Kubernetes validates the internal object, whose kind is empty: the Status names the group only.
    assert got["message"].startswith(f'.authorization.{srv.domain} "" is invalid: ')
    assert got["details"]["group"] == f"authorization.{srv.domain}" and "kind" not in got["details"]
    assert "exactly one of nonResourceAttributes or resourceAttributes must be specified" in got["message"]


async def test_a_subject_access_review_needs_a_user_or_a_group(srv):
    got = await review(srv, res(verb="get", resource="roles"), code=422)
    assert 'spec.user: Invalid value: "": at least one of user or group must be specified' in got["message"]


async def test_review_metadata_must_be_empty(srv):
    got = await review(srv, {"user": "alice", **res(verb="get")}, code=422, name="named")
    assert "metadata: Invalid value" in got["message"] and "must be empty" in got["message"]


async def test_rbac_errors_are_reported_in_the_reason_only(srv):
    # Kubernetes' RBAC authorizer returns them as its reason and no error, so the review's evaluationError
    # stays empty and kubectl auth can-i prints "no - RBAC: ... not found" once.
    await bind(srv, "ghostly", "ClusterRole", "ghost", [user("alice")])
    got = await review(srv, {"user": "alice", **res(verb="get", resource="roles")})
    g = f"rbac.authorization.{srv.domain}"
    assert got["status"] == {"allowed": False, "reason": f'RBAC: clusterrole.{g} "ghost" not found'}
    # beside a selector that does not parse, only the selector's error is an evaluation error
    spec = res(verb="list", resource="roles", labelSelector={"rawSelector": "a in ("})
    got = await review(srv, {"user": "alice", **spec})
    assert got["status"] == {"allowed": False, "reason": f'RBAC: clusterrole.{g} "ghost" not found',
                             "evaluationError": "spec.resourceAttributes.labelSelector ignored due to parse error"}


# ---- selectors -----------------------------------------------------------------------------------

async def test_raw_selector_and_requirements_together_are_invalid(srv):
    sel = {"rawSelector": "a=b", "requirements": [{"key": "a", "operator": "In", "values": ["b"]}]}
    got = await review(srv, {"user": "alice", **res(verb="list", resource="roles", labelSelector=sel)}, code=422)
    assert ('spec.resourceAttributes.labelSelector.rawSelector: Invalid value: "a=b": may not specified at the '
            "same time as requirements") in got["message"]


# (Neither rawSelector nor requirements: unrestricted, see tests/api/test_spec_audit.py.)


async def test_raw_selector_is_parsed_and_only_restricts(srv):
    await grant(srv, user("alice"), rule(["list"], ["roles"], ["*"]), name="lister")
    spec = res(verb="list", resource="roles", labelSelector={"rawSelector": "team in (a,b),!legacy"},
               fieldSelector={"rawSelector": "metadata.name=x"})
    assert (await review(srv, {"user": "alice", **spec}))["status"] == {
        "allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "lister" of ClusterRole "lister" to User "alice"'}


async def test_unparseable_raw_selector_is_ignored_and_reported(srv):
    spec = res(verb="list", resource="roles", labelSelector={"rawSelector": "a in ("})
    got = await review(srv, {"user": "alice", **spec})
    assert got["status"] == {"allowed": False,
                             "evaluationError": "spec.resourceAttributes.labelSelector ignored due to parse error"}


@pytest.mark.parametrize("operator", ["In", "NotIn"])
async def test_in_and_not_in_need_values(srv, operator):
    sel = {"requirements": [{"key": "k", "operator": operator}]}
    got = await review(srv, {"user": "alice", **res(verb="list", labelSelector=sel)}, code=422)
    assert ("spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified "
            "when `operator` is 'In' or 'NotIn'") in got["message"]


@pytest.mark.parametrize("operator", ["Exists", "DoesNotExist"])
async def test_exists_and_does_not_exist_take_no_values(srv, operator):
    sel = {"requirements": [{"key": "k", "operator": operator, "values": ["v"]}]}
    got = await review(srv, {"user": "alice", **res(verb="list", fieldSelector=sel)}, code=422)
    assert ("spec.resourceAttributes.fieldSelector.requirements[0].values: Forbidden: may not be specified "
            "when `operator` is 'Exists' or 'DoesNotExist'") in got["message"]


async def test_requirements_with_all_four_operators_are_accepted(srv):
    reqs = [{"key": "a", "operator": "In", "values": ["1"]}, {"key": "b", "operator": "NotIn", "values": ["2"]},
            {"key": "c", "operator": "Exists"}, {"key": "d", "operator": "DoesNotExist"}]
    got = await review(srv, {"user": "alice", **res(verb="list", labelSelector={"requirements": reqs})})
    assert got["status"] == {"allowed": False}


async def test_a_field_requirement_key_is_required(srv):
    sel = {"requirements": [{"operator": "In", "values": ["x"]}]}
    got = await review(srv, {"user": "alice", **res(verb="list", fieldSelector=sel)}, code=422)
    assert "spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified" \
        in got["message"]


async def test_an_unknown_operator_is_422_as_the_spec_requires(srv):
    # The spec: requirements.operator is one of In, NotIn, Exists, DoesNotExist.
    sel = {"requirements": [{"key": "a", "operator": "In", "values": ["1"]}, {"key": "b", "operator": "Gt"}]}
    got = await review(srv, {"user": "alice", **res(verb="list", labelSelector=sel)}, code=422)
    assert got["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.resourceAttributes.labelSelector.requirements[1].operator",
        "message": 'Invalid value: "Gt": not a valid selector operator'}]


# ---- LocalSubjectAccessReview --------------------------------------------------------------------

async def test_local_review_namespace_defaults_to_the_path_namespace(srv):
    await namespaces(srv, "a")
    await grant(srv, user("alice"), rule(["list"], ["roles"], ["*"]), namespace="a")
    got = await review(srv, {"user": "alice", **res(verb="list", resource="roles", group="g")},
                       kind="localsubjectaccessreviews", namespace="a")
    assert got["kind"] == "LocalSubjectAccessReview"
    assert got["metadata"]["namespace"] == "a"
    assert got["spec"]["resourceAttributes"]["namespace"] == "a"
    assert got["status"]["allowed"] is True


async def test_local_review_namespace_must_match_the_path_namespace(srv):
    await namespaces(srv, "a")
    got = await review(srv, {"user": "alice", **res(verb="list", namespace="b")},
                       kind="localsubjectaccessreviews", namespace="a", code=422)
    assert 'spec.resourceAttributes.namespace: Invalid value: "b": must match metadata.namespace' in got["message"]


async def test_local_review_refuses_non_resource_attributes(srv):
    await namespaces(srv, "a")
    got = await review(srv, {"user": "alice", "nonResourceAttributes": {"path": "/", "verb": "get"}},
                       kind="localsubjectaccessreviews", namespace="a", code=422)
    assert "spec.nonResourceAttributes" in got["message"] and "disallowed on this kind of request" in got["message"]


# ---- SelfSubjectAccessReview ---------------------------------------------------------------------

async def test_self_review_judges_the_caller(srv):
    await grant(srv, user("alice"), rule(["list"], ["clusterroles"], ["*"]))
    spec = res(verb="list", resource="clusterroles", group=f"rbac.authorization.{srv.domain}")
    assert (await review(srv, spec, token="alice-token", kind="selfsubjectaccessreviews"))["status"]["allowed"]
    assert not (await review(srv, spec, token="bob-token", kind="selfsubjectaccessreviews"))["status"]["allowed"]


async def test_self_review_ignores_a_user_in_the_spec(srv):
    spec = {"user": "admin", "groups": ["system:masters"], **res(verb="delete", resource="clusterroles")}
    async with srv.client(token="bob-token") as bob:
        r = await bob.post(f"{srv.authz}/selfsubjectaccessreviews", json={"spec": spec})
    assert r.status_code == 201 and r.json()["status"] == {"allowed": False}
    assert 'unknown field \\"spec.user\\"' in r.headers.get("Warning", "")


async def test_self_review_empty_namespace_means_all_namespaces(srv):
    await namespaces(srv, "a")
    await grant(srv, user("alice"), rule(["list"], ["roles"], ["*"]), namespace="a")
    got = await review(srv, res(verb="list", resource="roles", group="g"), token="alice-token",
                       kind="selfsubjectaccessreviews")
    assert got["status"]["allowed"] is False


async def test_anonymous_may_check_itself(srv):
    got = await review(srv, {"nonResourceAttributes": {"path": "/version", "verb": "get"}}, token=None,
                       kind="selfsubjectaccessreviews")
    assert got["status"]["allowed"] is True


# ---- SelfSubjectRulesReview ----------------------------------------------------------------------

async def test_rules_review_lists_cluster_and_namespace_rules(srv):
    await namespaces(srv, "a", "b")
    await grant(srv, user("alice"), rule(["list"], ["roles"], ["g"]), namespace="a")
    in_a = await review(srv, {"namespace": "a"}, token="alice-token", kind="selfsubjectrulesreviews")
    in_b = await review(srv, {"namespace": "b"}, token="alice-token", kind="selfsubjectrulesreviews")
    wanted = {"verbs": ["list"], "apiGroups": ["g"], "resources": ["roles"]}
    assert wanted in in_a["status"]["resourceRules"] and wanted not in in_b["status"]["resourceRules"]
    assert {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]} \
        in in_a["status"]["nonResourceRules"]
    assert in_a["status"]["incomplete"] is False and "evaluationError" not in in_a["status"]


async def test_rules_review_needs_a_namespace(srv):
    got = await review(srv, {}, token="alice-token", kind="selfsubjectrulesreviews", code=400)
    assert got["message"] == "no namespace on request"


async def test_rules_review_reports_evaluation_errors_with_the_rules_found(srv):
    await bind(srv, "ghostly", "ClusterRole", "ghost", [user("alice")])
    got = await review(srv, {"namespace": "a"}, token="alice-token", kind="selfsubjectrulesreviews")
    status = got["status"]
    assert status["evaluationError"] == f'clusterrole.rbac.authorization.{srv.domain} "ghost" not found'
    assert status["incomplete"] is False and status["nonResourceRules"]


async def test_anonymous_may_list_its_own_rules(srv):
    got = await review(srv, {"namespace": "default"}, token=None, kind="selfsubjectrulesreviews")
    assert {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]} \
        in got["status"]["nonResourceRules"]


# ---- who may create which review ----------------------------------------------------------------

async def test_subject_access_review_needs_a_grant(srv):
    got = await review(srv, {"user": "x", **res(verb="get")}, token="alice-token", code=403)
    assert got["message"].startswith(f'subjectaccessreviews.authorization.{srv.domain} is forbidden: User "alice" '
                                     "cannot create resource")


async def test_anonymous_may_not_create_a_subject_access_review(srv):
    await review(srv, {"user": "x", **res(verb="get")}, token=None, code=403)


async def test_local_subject_access_review_needs_a_grant_in_its_namespace(srv):
    await namespaces(srv, "a", "b")
    await grant(srv, user("alice"), rule(["create"], ["localsubjectaccessreviews"], [f"authorization.{srv.domain}"]),
                namespace="a")
    spec = {"user": "x", **res(verb="get")}
    await review(srv, spec, token="alice-token", kind="localsubjectaccessreviews", namespace="a")
    await review(srv, spec, token="alice-token", kind="localsubjectaccessreviews", namespace="b", code=403)


async def test_self_reviews_stay_allowed_without_any_binding(srv):
    async with srv.client() as admin:
        await ok(await admin.delete(f"{srv.rbac}/clusterrolebindings/system:basic-user"))
    await review(srv, {"namespace": "a"}, token="bob-token", kind="selfsubjectrulesreviews")
    await review(srv, res(verb="get"), token="bob-token", kind="selfsubjectaccessreviews")


# ---- SelfSubjectReview ---------------------------------------------------------------------------

async def test_self_subject_review_returns_the_callers_user_info(srv):
    async with srv.client(token="alice-token") as alice:
        r = await alice.post(f"/apis/authentication.{srv.domain}/v1/selfsubjectreviews", json={})
    assert r.status_code == 201, r.text
    assert r.json()["status"]["userInfo"] == {"username": "alice", "uid": "alice-uid",
                                              "groups": ["devs", "qa", "system:authenticated"]}
