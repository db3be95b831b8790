"""`networking/v1` `IngressClass`: which controller implements a class of Ingresses (Kubernetes'
`pkg/registry/networking/ingressclass`), cluster-scoped.

- Defaults (`SetDefaults_IngressClass`): a `parameters` reference without
  a `scope` is Cluster-scoped.
- Validation (`ValidateIngressClass`): the name is a DNS subdomain;
  `controller` is required, at most 250 bytes, a domain-prefixed path
  (`example.com/ingress-controller`); `parameters` has a kind and a name
  (path segments), an apiGroup that is a DNS subdomain, a scope Cluster or
  Namespace: Namespace requires a `namespace` (a DNS label), Cluster
  forbids one.
- Update (`ValidateIngressClassUpdate`): `controller` is immutable.
- The default class (`ingressclass.kubernetes.io/is-default-class: "true"`):
  the strategy follows which classes are default (`default_class`: the
  newest, as Kubernetes' DefaultIngressClass admission picks for an Ingress
  without a class).
- Generation 1 on create, counted on spec changes; a PUT of a missing class is 404.
- `kubectl get`: NAME CONTROLLER PARAMETERS AGE (printIngressClass:
  `Kind.apiGroup/name`, `<none>`).
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required, too_long
from runtime.machinery.validation.names import dns1123_label_errors
from runtime.server.kinds.cluster.defaultclass import DefaultClasses
from runtime.server.kinds.cluster.netrules import backend_reference_errors
from runtime.server.kinds.cluster.stored import ClusterStrategy
from runtime.server.kinds.cluster.volumes import subdomain_errors
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.parts import SchemeObserver

__all__ = ["IngressClassStrategy", "domain_prefixed_path_errors", "DEFAULT_CLASS_ANNOTATION"]

DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"

_MAX_CONTROLLER = 250
_SCOPES = ["Cluster", "Namespace"]
_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(_HTTP_PATH_FMT)


def domain_prefixed_path_errors(value: str, path: str) -> list[FieldError]:
    """apimachinery's `IsDomainPrefixedPath`."""
    if not value:
        return [required(path)]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [invalid(path, host, msg) for msg in subdomain_errors(host)]
    if not _HTTP_PATH.fullmatch(rest):
        errs.append(invalid(path, rest, f"Invalid path (regex used for validation is '{_HTTP_PATH_FMT}')"))
    return errs


def _parameters_errors(params: dict[str, Any]) -> list[FieldError]:
    path = "spec.parameters"
    errs = backend_reference_errors(params, path)
    scope = params.get("scope")
    if scope is None:
        return errs + [required(f"{path}.scope")]
    namespace = params.get("namespace")
    if scope not in _SCOPES:
        errs.append(not_supported(f"{path}.scope", scope, _SCOPES))
    elif scope == "Namespace":
        if namespace is None:
            errs.append(required(f"{path}.namespace", "`parameters.scope` is set to 'Namespace'"))
        else:
            errs += [invalid(f"{path}.namespace", namespace, msg) for msg in dns1123_label_errors(namespace)]
    elif namespace is not None:
        errs.append(forbidden(f"{path}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return errs


def _parameters_text(params: dict[str, Any] | None) -> str:
    if params is None:
        return "<none>"
    kind = params.get("kind", "")
    if params.get("apiGroup") is not None:
        kind = f"{kind}.{params['apiGroup']}"
    return f"{kind}/{params.get('name', '')}"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec = obj["metadata"], obj.get("spec") or {}
    return [meta.get("name", ""), spec.get("controller", ""), _parameters_text(spec.get("parameters")),
            age(meta.get("creationTimestamp"))]


_COLUMNS = Columns((
    NAME_COLUMN,
    column("Controller", "Controller that is responsible for handling this class"),
    column("Parameters", "A reference to a resource with additional parameters"),
    AGE_COLUMN,
), _cells)


def _is_default(obj: dict[str, Any]) -> bool:
    return (obj["metadata"].get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"


class IngressClassStrategy(ClusterStrategy, SchemeObserver):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    counts_generation = True
    columns = _COLUMNS

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        #: The default classes the watch cache holds.
        self.defaults = DefaultClasses(_is_default)

    def observe(self, event_type: str, obj: dict[str, Any]) -> None:
        self.defaults.observe(event_type, obj)

    def observe_list(self, objs: list[dict[str, Any]]) -> None:
        self.defaults.replace(objs)

    def default_class(self) -> str | None:
        """The class an Ingress without one gets (`DefaultClasses.newest`)."""
        return self.defaults.newest()

    def default(self, obj: dict[str, Any]) -> None:
        params = (obj.get("spec") or {}).get("parameters")
        if isinstance(params, dict) and params.get("scope") is None:
            params["scope"] = "Cluster"

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        controller = spec.get("controller") or ""
        errs = [too_long("spec.controller", _MAX_CONTROLLER)] if len(controller) > _MAX_CONTROLLER else []
        errs += domain_prefixed_path_errors(controller, "spec.controller")
        if spec.get("parameters") is not None:
            errs += _parameters_errors(spec["parameters"])
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        controller = (new.get("spec") or {}).get("controller") or ""
        errs = []
        if controller != ((old.get("spec") or {}).get("controller") or ""):
            errs.append(invalid("spec.controller", controller, "field is immutable"))
        return errs + self.validate(new)
