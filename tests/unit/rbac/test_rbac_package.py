"""Package surface and value types: UserInfo and Attributes."""

import runtime.server.rbac as rbac
from runtime.server.rbac import (
    SelectorRequirement, UserInfo, non_resource_attributes, resource_attributes,
    service_account_user, split_service_account_username,
)


def test_exports_exist():
    assert {"SelectorRequirement", "UserInfo", "non_resource_attributes", "resource_attributes",
            "service_account_user", "split_service_account_username"} <= set(rbac.__all__)
    for name in rbac.__all__:
        assert hasattr(rbac, name), name


def test_user_info_is_frozen_and_hashable_with_lists_normalised():
    u = UserInfo("alice", groups=["a", "b"], extra={"scopes": ["x"]})
    assert u.groups == ("a", "b")
    assert u.extra["scopes"] == ("x",)
    assert hash(u) == hash(UserInfo("alice", groups=("a", "b"), extra={"other": ("y",)}))
    assert u == UserInfo("alice", groups=("a", "b"), extra={"scopes": ("x",)})


def test_service_account_user_has_authenticator_groups():
    u = service_account_user("ns", "builder")
    assert u.name == "system:serviceaccount:ns:builder"
    assert u.groups == ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated")
    assert split_service_account_username(u.name) == ("ns", "builder")
    assert split_service_account_username("alice") is None


def test_attribute_helpers_mark_request_kind_and_carry_selectors():
    req = SelectorRequirement("app", "In", ("web",))
    res = resource_attributes(UserInfo("a"), "list", "roles", api_group="g", namespace="n",
                              label_selector=[req])
    assert res.resource_request and res.label_selector == (req,) and res.path == ""
    non = non_resource_attributes(UserInfo("a"), "get", "/healthz")
    assert not non.resource_request and non.path == "/healthz" and non.resource == ""
