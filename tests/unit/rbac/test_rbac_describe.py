"""Forbidden messages, as kube-apiserver writes them."""

from runtime.server.rbac import (
    UserInfo, describe_forbidden, forbidden_status_message, non_resource_attributes,
    resource_attributes,
)

RBAC = "rbac.authorization.k8s.io"
X = UserInfo("x")


def test_forbidden_message_namespaced():
    attrs = resource_attributes(X, "list", "roles", api_group=RBAC, namespace="y")
    assert describe_forbidden(attrs) == \
        'User "x" cannot list resource "roles" in API group "rbac.authorization.k8s.io" in the namespace "y"'


def test_forbidden_message_cluster_scope():
    attrs = resource_attributes(X, "list", "clusterroles", api_group=RBAC)
    assert describe_forbidden(attrs) == \
        'User "x" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope'


def test_forbidden_message_core_group_is_empty_quotes():
    attrs = resource_attributes(X, "get", "namespaces", name="n")
    assert describe_forbidden(attrs) == \
        'User "x" cannot get resource "namespaces" in API group "" at the cluster scope'


def test_forbidden_message_names_the_subresource():
    attrs = resource_attributes(X, "update", "clusterroles", api_group=RBAC, subresource="status",
                                name="admin")
    assert describe_forbidden(attrs) == ('User "x" cannot update resource "clusterroles/status" in '
                                         'API group "rbac.authorization.k8s.io" at the cluster scope')


def test_forbidden_message_non_resource_path():
    assert describe_forbidden(non_resource_attributes(X, "get", "/foo")) == \
        'User "x" cannot get path "/foo"'


def test_forbidden_message_anonymous():
    anon = UserInfo("system:anonymous", groups=("system:unauthenticated",))
    assert describe_forbidden(non_resource_attributes(anon, "get", "/apis")) == \
        'User "system:anonymous" cannot get path "/apis"'


def test_forbidden_message_escapes_html_and_quotes():
    attrs = non_resource_attributes(UserInfo('a"<b>&'), "get", "/p")
    assert describe_forbidden(attrs) == 'User "a\\"&lt;b&gt;&amp;" cannot get path "/p"'


def test_forbidden_status_message_qualifies_resource_and_name():
    attrs = resource_attributes(X, "get", "roles", api_group=RBAC, namespace="y", name="r")
    assert forbidden_status_message(attrs) == (
        'roles.rbac.authorization.k8s.io "r" is forbidden: User "x" cannot get resource "roles" '
        'in API group "rbac.authorization.k8s.io" in the namespace "y"')
    collection = resource_attributes(X, "list", "namespaces")
    assert forbidden_status_message(collection, "RBAC: boom") == (
        'namespaces is forbidden: User "x" cannot list resource "namespaces" in API group "" '
        'at the cluster scope: RBAC: boom')
    assert forbidden_status_message(non_resource_attributes(X, "get", "/foo")) == \
        'forbidden: User "x" cannot get path "/foo"'
