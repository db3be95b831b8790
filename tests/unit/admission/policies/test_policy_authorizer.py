"""The `authorizer` CEL library of admission policies (`runtime.server.admission.policies.authorizer`), as
Kubernetes' `library/authz.go`; one test per rule."""

from __future__ import annotations

import pytest
from celpy import celtypes

from tests.support.policy_fakes import FakeContext
from runtime.server.admission.policies.authorizer import CELAuthorizer
from runtime.server.admission.policies.expressions import Budget, ExpressionError, Scope, compile_cel
from runtime.server.rbac.user import UserInfo

ALICE = UserInfo("alice", groups=("dev",))


def run(text: str, context: FakeContext, **request: str) -> object:
    authorizer = CELAuthorizer(ALICE, context.decide, **request)
    return Scope({"authorizer": authorizer}, {}).run(compile_cel(text), Budget())


def test_a_resource_check_asks_the_authorizer_with_every_version():
    context = FakeContext(allow=lambda a: a.resource == "deployments" and a.verb == "update")
    assert run("authorizer.group('apps').resource('deployments').namespace('ns').name('web').check('update')"
               ".allowed()", context) == celtypes.BoolType(True)
    asked = context.asked[0]
    assert (asked.user, asked.api_group, asked.api_version, asked.resource, asked.namespace, asked.name,
            asked.resource_request) == (ALICE, "apps", "*", "deployments", "ns", "web", True)


def test_a_subresource_check_names_the_subresource():
    context = FakeContext()
    run("authorizer.group('').resource('pods').subresource('exec').check('create').allowed()", context)
    assert (context.asked[0].resource, context.asked[0].subresource) == ("pods", "exec")


def test_a_path_check_asks_a_non_resource_request():
    context = FakeContext(allow=lambda a: a.path == "/healthz")
    assert run("authorizer.path('/healthz').check('get').allowed()", context)
    assert (context.asked[0].resource_request, context.asked[0].verb) == (False, "get")


def test_a_service_account_check_asks_as_the_account():
    context = FakeContext()
    run("authorizer.serviceAccount('ns', 'robot').group('').resource('pods').check('list').allowed()", context)
    user = context.asked[0].user
    assert (user.name, user.groups) == ("system:serviceaccount:ns:robot",
                                        ("system:serviceaccounts", "system:serviceaccounts:ns"))


def test_request_resource_is_the_requests_own_resource():
    context = FakeContext()
    run("authorizer.requestResource.check('delete').allowed()", context, group="apps", resource="deployments",
        subresource="scale", namespace="ns", name="web")
    asked = context.asked[0]
    assert (asked.api_group, asked.resource, asked.subresource, asked.namespace, asked.name, asked.verb) == (
        "apps", "deployments", "scale", "ns", "web", "delete")


def test_a_decision_answers_its_reason_and_whether_it_errored():
    context = FakeContext(allow=lambda a: True)
    assert run("authorizer.path('/x').check('get').reason()", context) == "allowed by test"
    assert run("authorizer.path('/x').check('get').errored()", context) == celtypes.BoolType(False)
    assert run("authorizer.path('/x').check('get').error()", context) == ""


def test_decisions_are_cached_for_the_request():
    context = FakeContext()
    run("authorizer.path('/x').check('get').allowed() || authorizer.path('/x').check('get').allowed()", context)
    assert len(context.asked) == 1


def test_a_method_on_the_wrong_receiver_is_no_such_overload():
    with pytest.raises(ExpressionError, match="no such overload"):
        run("authorizer.resource('pods')", FakeContext())
