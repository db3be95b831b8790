"""The scheme binds each kind to its strategy: a built-in kind's (`runtime.server.kinds.STRATEGIES`) when it is
first asked for, so that a client loads no strategy; a kind registered with its strategy at once, as always."""

from __future__ import annotations

import pytest

from runtime.machinery.scheme import ResourceType, Scheme
from runtime.models import catalog
from runtime.server.kinds import STRATEGIES
from runtime.server.kinds.rbac import RoleStrategy
from runtime.server.kinds.reviews import SelfSubjectReviewStrategy


def test_every_built_in_kind_has_a_strategy_in_discovery_order():
    assert list(STRATEGIES) == list(catalog.BUILTIN_KINDS)


def test_a_built_in_kind_is_served_by_its_strategy_bound_to_it_once():
    scheme = Scheme("k8s.io")
    role, review = scheme.by_kind("Role"), scheme.by_kind("SelfSubjectReview")
    assert isinstance(role.strategy, RoleStrategy) and isinstance(review.strategy, SelfSubjectReviewStrategy)
    assert role.strategy is role.strategy and (role.strategy.scheme, role.strategy.rt) == (scheme, role)
    assert scheme.namespace_type is scheme.by_kind("Namespace")


def test_a_kind_registered_with_its_strategy_is_bound_at_once():
    made = []
    scheme = Scheme(kinds=())
    rt = scheme.register(catalog.LEASE, lambda s, t: made.append((s, t)) or "lease strategy")
    assert made == [(scheme, rt)]
    assert rt.strategy == "lease strategy" and len(made) == 1


def test_a_strategy_that_cannot_be_made_serves_nothing():
    def broken(scheme, rt):
        raise RuntimeError("no strategy")

    scheme = Scheme(kinds=())
    with pytest.raises(RuntimeError):
        scheme.register(catalog.LEASE, broken)
    assert scheme.types == () and scheme.by_kind("Lease") is None


def test_a_kind_named_by_its_facts_has_no_strategy():
    assert ResourceType.of("example.com/v1", "Team", "teams").strategy is None
