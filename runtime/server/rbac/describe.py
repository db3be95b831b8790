"""The Forbidden message for a request no authorizer allowed.

As kube-apiserver's `responsewriters.forbiddenMessage` and `Forbidden`:

- resource, namespaced: `User "x" cannot list resource "roles" in API group "g" in the namespace "ns"`
- resource, cluster-wide: `... in API group "g" at the cluster scope`
- the resource is `resource/subresource` when there is a subresource;
- non-resource: `User "x" cannot get path "/foo"`.

`&`, `<` and `>` are written as HTML entities, so no message looks like HTML.
`forbidden_status_message` gives the full `Status.message`, as
`apierrors.NewForbidden` builds it: `roles.g "name" is forbidden: <message>[: <reason>]`.
"""

from __future__ import annotations

from runtime.machinery.validation.gofmt import go_quote
from runtime.server.rbac.attributes import Attributes

__all__ = ["describe_forbidden", "forbidden_status_message"]


def _sanitize(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def describe_forbidden(attrs: Attributes) -> str:
    """Return Kubernetes' forbidden message for `attrs` (sanitized, no reason)."""
    user = go_quote(attrs.user.name)
    if not attrs.resource_request:
        return _sanitize(f"User {user} cannot {attrs.verb} path {go_quote(attrs.path)}")
    resource = attrs.resource
    if attrs.subresource:
        resource = f"{resource}/{attrs.subresource}"
    head = (f"User {user} cannot {attrs.verb} resource {go_quote(resource)} "
            f"in API group {go_quote(attrs.api_group)}")
    if attrs.namespace:
        return _sanitize(f"{head} in the namespace {go_quote(attrs.namespace)}")
    return _sanitize(f"{head} at the cluster scope")


def forbidden_status_message(attrs: Attributes, reason: str = "") -> str:
    """Return the `Status.message` of the 403 answer: `<resource>[.<group>] ["<name>" ]is forbidden: ...`.

    `reason` is the authorizer's reason, appended after `: ` when not empty.
    A non-resource request reads `forbidden: User "x" cannot get path "/foo"`.
    The Status details are name = `attrs.name`, group = `attrs.api_group`,
    kind = `attrs.resource`.
    """
    message = describe_forbidden(attrs)
    if reason:
        message = f"{message}: {reason}"
    resource, group = attrs.resource, attrs.api_group
    if not resource and not group:
        return f"forbidden: {message}"
    qualified = f"{resource}.{group}" if group else resource
    if not attrs.name:
        return f"{qualified} is forbidden: {message}"
    return f"{qualified} {go_quote(attrs.name)} is forbidden: {message}"
