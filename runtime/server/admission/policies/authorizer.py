"""The `authorizer` CEL library of admission policies (Kubernetes' `k8s.io/apiserver/pkg/cel/library/authz.go`).

An expression asks the server's authorizer about the request's user:

    authorizer.group('apps').resource('deployments').namespace('ns').name('web').check('update').allowed()
    authorizer.path('/healthz').check('get').reason()
    authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('list').allowed()
    authorizer.requestResource.subresource('scale').check('update').errored()

`CELAuthorizer(user, decide, request)` is the `authorizer` variable's value;
`AUTHORIZER_FUNCTIONS` the methods (`group`, `resource`, `subresource`,
`namespace`, `name`, `path`, `serviceAccount`, `check`, `allowed`, `reason`,
`errored`, `error`), for `Program.evaluate(functions=)`. A check asks
`decide(attributes)` (the registry's authorizer, synchronous) with
apiVersion `*`, as kube's; decisions are cached per attributes for the
request (kube's caching authorizer), so an expression evaluated once per
param asks once. A service account's user is `system:serviceaccount:<ns>:<name>`
in groups `system:serviceaccounts` and `system:serviceaccounts:<ns>`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from runtime.server.rbac import Decision
from runtime.server.rbac.attributes import Attributes, non_resource_attributes, resource_attributes
from runtime.server.rbac.user import UserInfo

__all__ = ["CELAuthorizer", "AUTHORIZER_FUNCTIONS"]

Decide = Callable[[Attributes], Decision]


class _Asker:
    """Who asks and how: the user, the authorizer, the request's decision cache."""

    def __init__(self, user: UserInfo, decide: Decide) -> None:
        self.user = user
        self.decide = decide
        self.cache: dict[Attributes, Decision] = {}

    def ask(self, attrs: Attributes) -> "_Decision":
        decision = self.cache.get(attrs)
        if decision is None:
            decision = self.cache[attrs] = self.decide(attrs)
        return _Decision(decision)

    def as_user(self, user: UserInfo) -> "_Asker":
        other = _Asker(user, self.decide)
        other.cache = self.cache
        return other


@dataclass(frozen=True, eq=False)
class _GroupCheck:
    asker: _Asker
    group: str


@dataclass(frozen=True, eq=False)
class _ResourceCheck:
    asker: _Asker
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    def check(self, verb: str) -> "_Decision":
        return self.asker.ask(resource_attributes(
            self.asker.user, verb, self.resource, api_group=self.group, api_version="*",
            subresource=self.subresource, namespace=self.namespace, name=self.name))


@dataclass(frozen=True, eq=False)
class _PathCheck:
    asker: _Asker
    path: str

    def check(self, verb: str) -> "_Decision":
        return self.asker.ask(non_resource_attributes(self.asker.user, verb, self.path))


@dataclass(frozen=True, eq=False)
class _Decision:
    decision: Decision


class CELAuthorizer(celtypes.MapType):
    """The `authorizer` variable: a map so that `authorizer.requestResource` is a field (kube's
    `authorizer.requestResource` variable), the receiver of `group`, `path` and `serviceAccount`."""

    def __init__(self, user: UserInfo, decide: Decide, *, group: str = "", resource: str = "",
                 subresource: str = "", namespace: str = "", name: str = "") -> None:
        self.asker = _Asker(user, decide)
        super().__init__({celtypes.StringType("requestResource"): _ResourceCheck(
            self.asker, group, resource, subresource, namespace, name)})

    @classmethod
    def _for(cls, asker: _Asker) -> "CELAuthorizer":
        made = cls.__new__(cls)
        made.asker = asker
        celtypes.MapType.__init__(made, {})
        return made


def _no_overload(name: str) -> CELEvalError:
    return CELEvalError(f"no such overload: {name}")


def _strings(*values: Any) -> bool:
    return all(isinstance(v, str) for v in values)


def _group(target: Any, group: Any) -> Any:
    if not isinstance(target, CELAuthorizer) or not _strings(group):
        return _no_overload("group")
    return _GroupCheck(target.asker, str(group))


def _path(target: Any, path: Any) -> Any:
    if not isinstance(target, CELAuthorizer) or not _strings(path):
        return _no_overload("path")
    return _PathCheck(target.asker, str(path))


def _service_account(target: Any, namespace: Any, name: Any) -> Any:
    if not isinstance(target, CELAuthorizer) or not _strings(namespace, name):
        return _no_overload("serviceAccount")
    user = UserInfo(f"system:serviceaccount:{namespace}:{name}",
                    groups=("system:serviceaccounts", f"system:serviceaccounts:{namespace}"))
    return CELAuthorizer._for(target.asker.as_user(user))


def _resource(target: Any, resource: Any) -> Any:
    if not isinstance(target, _GroupCheck) or not _strings(resource):
        return _no_overload("resource")
    return _ResourceCheck(target.asker, target.group, str(resource))


def _narrow(field_name: str) -> Callable[[Any, Any], Any]:
    def narrow(target: Any, value: Any) -> Any:
        if not isinstance(target, _ResourceCheck) or not _strings(value):
            return _no_overload(field_name)
        return replace(target, **{field_name: str(value)})
    return narrow


def _check(target: Any, verb: Any) -> Any:
    if not isinstance(target, (_ResourceCheck, _PathCheck)) or not _strings(verb):
        return _no_overload("check")
    return target.check(str(verb))


def _decision(name: str, answer: Callable[[Decision], Any]) -> Callable[[Any], Any]:
    def read(target: Any) -> Any:
        if not isinstance(target, _Decision):
            return _no_overload(name)
        return answer(target.decision)
    return read


AUTHORIZER_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "group": _group,
    "path": _path,
    "serviceAccount": _service_account,
    "resource": _resource,
    "subresource": _narrow("subresource"),
    "namespace": _narrow("namespace"),
    "name": _narrow("name"),
    "check": _check,
    "allowed": _decision("allowed", lambda d: celtypes.BoolType(d.allowed)),
    "reason": _decision("reason", lambda d: celtypes.StringType(d.reason)),
    "errored": _decision("errored", lambda d: celtypes.BoolType(bool(d.evaluation_error))),
    "error": _decision("error", lambda d: celtypes.StringType(d.evaluation_error)),
}
