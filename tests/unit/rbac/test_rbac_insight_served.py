"""Property tests through the served kinds: WhoCan and AccessExplanation agree with SubjectAccessReview.

The acceptance of issue 18 in its own words: over random policies (see
`tests.support.rbac_policies`), the WhoCan kind's answer agrees exactly with
brute force over all subjects through SubjectAccessReview, and every
AccessExplanation's verdict with the review's. Each kind's strategy answers
as the server does (`evaluate`), over a context holding the policy's index
and its authorizer, as `RegistryCore` holds them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import assume, given

from runtime.server.rbac import RBACAuthorizer, SYSTEM_MASTERS, UserInfo
from runtime.server.rbac.attributes import Attributes
from runtime.models.insight import InsightSubject
from runtime.server.rbac.insight import probe_user, subjects_in
from runtime.machinery.scheme import Scheme
from tests.support.rbac_policies import SETTINGS, scenarios

SCHEME = Scheme()
WHO_CAN = SCHEME.by_kind("WhoCan").strategy
EXPLAIN = SCHEME.by_kind("AccessExplanation").strategy
REVIEW = SCHEME.by_kind("SubjectAccessReview").strategy
ADMIN = UserInfo("admin", groups=(SYSTEM_MASTERS,))


@dataclasses.dataclass
class Policy:
    """The policy context a kind's `evaluate` reads: the index and the authorizer over it."""

    rbac: Any

    def decide(self, attrs: Attributes):
        return RBACAuthorizer(self.rbac).authorize(attrs)


def spec_of(attrs: Attributes) -> dict[str, Any]:
    """The request's spec; a drawn URL that no request has (not starting with /) is skipped."""
    if not attrs.resource_request:
        assume(attrs.path.startswith("/"))
        return {"nonResourceAttributes": {"verb": attrs.verb, "path": attrs.path}}
    return {"resourceAttributes": {"verb": attrs.verb, "group": attrs.api_group, "resource": attrs.resource,
                                   "subresource": attrs.subresource, "namespace": attrs.namespace,
                                   "name": attrs.name}}


def review(policy: Policy, user: UserInfo, spec: dict[str, Any]) -> bool:
    subject = {"user": user.name, "groups": list(user.groups)}
    answer = REVIEW.evaluate(policy, ADMIN, "", {"spec": {**spec, **subject}})
    return answer["status"]["allowed"]


@SETTINGS
@given(scenarios())
def test_who_can_agrees_with_subject_access_reviews_of_every_subject(scenario):
    source, attrs = scenario
    policy, spec = Policy(source), spec_of(attrs)
    answer = WHO_CAN.evaluate(policy, ADMIN, "", {"spec": spec})
    listed = {InsightSubject(s["subject"]["kind"], s["subject"]["name"], s["subject"].get("namespace", ""))
              for s in answer["status"]["subjects"]}
    everyone = set(subjects_in(source)) | {InsightSubject("Group", SYSTEM_MASTERS)}
    assert listed <= everyone
    for subject in everyone:
        assert (subject in listed) == review(policy, probe_user(subject), spec), subject


@SETTINGS
@given(scenarios())
def test_every_served_explanation_verdict_agrees_with_the_subject_access_review(scenario):
    source, attrs = scenario
    policy, spec = Policy(source), spec_of(attrs)
    subject = {"user": attrs.user.name, "groups": list(attrs.user.groups)}
    answer = EXPLAIN.evaluate(policy, ADMIN, "", {"spec": {**spec, **subject}})
    assert answer["status"]["allowed"] == review(policy, attrs.user, spec)
