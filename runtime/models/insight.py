"""insight/v1 kinds: questions about the RBAC policy, answered from the authorizer's indexes.

Virtual kinds (create only, never stored), as the access reviews: the
request is `spec`, the answer `status`. The status types are also the
results `runtime.server.rbac.insight` computes (one definition for the server, the
OpenAPI document, the CLI and the page): `InsightValue`s, frozen, built
positionally in field order as the insight code does, and written by
`to_dict()` as Go's `omitempty` writes them ("" and empty lists left out,
but for the fields a class keeps in `_KEEP_EMPTY`).
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Optional, Self

from pydantic import ConfigDict, Field

from runtime.models.authorization import NonResourceAttributes, ResourceAttributes
from runtime.models.base import K8sModel, list_field, map_field
from runtime.models.meta import ObjectMeta
from runtime.models.rbac import PolicyRule
from runtime.machinery.validation.gofmt import go_quote

__all__ = [
    "InsightValue", "InsightKind", "InsightObjectRef", "InsightSubject", "InsightGrant", "AttributeCheck",
    "RuleExplanation", "BindingExplanation", "NearMiss", "ExplainedRequest", "AccessExplanationSpec",
    "AccessExplanationStatus", "AccessExplanation", "WhoCanSpec", "SubjectAccess", "WhoCanStatus",
    "WhoCan", "MatrixResource", "AccessMatrixSpec", "AccessMatrixRow", "AccessMatrixStatus",
    "AccessMatrix", "Access", "Severity", "LintFinding", "NamespaceBlocker", "TerminatingNamespace",
    "RBACLintSpec", "RBACLintStatus", "RBACLint", "AggregationNode", "AggregationEdge", "AggregationGraphSpec",
    "AggregationGraphStatus", "AggregationGraph", "Permission", "permission_rule", "SubjectDiff", "RBACDiffSpec",
    "RBACDiffStatus", "RBACDiff",
]


def _text(description: str, default: Any = None) -> Any:
    return Field(default=default, description=description)


def _strings(description: str, default: Any = None) -> Any:
    return list_field(description=description, default=default)


# ---- the base of results ------------------------------------------------------------------------

def _json(value: Any) -> Any:
    if isinstance(value, K8sModel):  # an InsightValue, or a PolicyRule in one
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


class InsightValue(K8sModel):
    """Base of the insight results: frozen (hashable when its fields are), built by position or by name.

    By position, fields' order is their meaning; tuples are taken as lists.
    `of(...)` builds one so without validating, for code that makes many.
    `to_dict()` leaves out None always, "" and empty collections unless the
    field is in `_KEEP_EMPTY` (where "" means something: the core group, no
    subresource). Booleans and numbers are always written.
    """

    model_config = ConfigDict(frozen=True)

    _KEEP_EMPTY: ClassVar[frozenset[str]] = frozenset()

    _field_names: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _containers: ClassVar[tuple[str, ...]] = ()
    _all_fields: ClassVar[frozenset[str]] = frozenset()
    _json_keys: ClassVar[tuple[tuple[str, str], ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # Read once: model_fields is a costly property, and results are built by the ten thousand.
        cls._field_names = tuple(cls.model_fields)
        cls._defaults = {name: info.default for name, info in cls.model_fields.items()}
        cls._all_fields = frozenset(cls._field_names)
        cls._json_keys = tuple((name, info.alias or name) for name, info in cls.model_fields.items())
        cls._containers = tuple(name for name, info in cls.model_fields.items()  # Optional[list[...]] ones
                                if typing.get_origin(typing.get_args(info.annotation)[0]) in (list, dict))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Validate a result given by position (in field order) or by name; nested JSON comes here too."""
        if args:
            kwargs.update(zip(self._field_names, args))
        for name in self._containers:
            if type(kwargs.get(name)) is tuple:
                kwargs[name] = list(kwargs[name])
        super().__init__(**kwargs)

    @classmethod
    def of(cls, *args: Any, **kwargs: Any) -> Self:
        """Build a result from the insight code's own values, as `__init__` takes them, without validating.

        The values are typed already, and a lint or a diff builds a hundred thousand results:
        validating them would double its cost. Tuples become lists and an empty list or map
        default is a fresh one, as validation gives.
        """
        self = cls.__new__(cls)
        names = cls._field_names
        if len(args) == len(names):
            values = dict(zip(names, args))
        else:
            values = dict(cls._defaults)
            values.update(zip(names, args))
            values.update(kwargs)
        for name in cls._containers:
            value = values[name]
            if type(value) is tuple:
                values[name] = list(value)
            elif value is cls._defaults[name] and value is not None:
                values[name] = type(value)()
        object.__setattr__(self, "__dict__", values)
        # One set for all (frozen: it never changes); a set each is more for the GC to walk.
        object.__setattr__(self, "__pydantic_fields_set__", cls._all_fields)
        object.__setattr__(self, "__pydantic_extra__", None)
        object.__setattr__(self, "__pydantic_private__", None)
        return self

    def __eq__(self, other: Any) -> bool:
        # The fields only (results have no private or extra attributes): a fifth of BaseModel's cost.
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: camelCase keys, empty fields omitted (see the class doc)."""
        out: dict[str, Any] = {}
        values = self.__dict__
        for name, key in self._json_keys:
            value = values[name]
            if value is None:
                continue
            if (value == "" or (isinstance(value, (list, tuple, Mapping)) and not value)) \
                    and name not in self._KEEP_EMPTY:
                continue
            out[key] = _json(value)
        return out


class _Ordered:
    """Results sorted as tuples of their fields, in order (as a dataclass with `order=True`)."""

    def sort_key(self) -> tuple[Any, ...]:
        """The fields' values in their declared order (`sorted(xs, key=Cls.sort_key)` is `sorted(xs)`, faster)."""
        return tuple(self.__dict__.values())  # a model's __dict__ holds its fields in declared order

    def __lt__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.sort_key() < other.sort_key()


class InsightKind(K8sModel):
    """Base of the six kinds: `apiVersion`, `kind` and `metadata`; each adds its `spec` and `status`."""

    api_version: Optional[str] = None
    kind: Optional[str] = None
    metadata: Optional[ObjectMeta] = None


# ---- shared values ------------------------------------------------------------------------------

class InsightObjectRef(_Ordered, InsightValue):
    """An object (a role, a binding, or what remains in a namespace) by kind, namespace and name."""

    kind: Optional[str] = _text("The object's kind (ClusterRole, RoleBinding, ...).")
    name: Optional[str] = _text("The object's name.")
    namespace: Optional[str] = _text("The object's namespace; empty for cluster-scoped objects.", "")

    def __str__(self) -> str:
        """`Kind "ns/name"` (`Kind "name"` when cluster-scoped), as messages name it."""
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {go_quote(where or '')}"


class InsightSubject(_Ordered, InsightValue):
    """A binding subject: a User, a Group or a ServiceAccount."""

    kind: Optional[str] = _text("User, Group or ServiceAccount.")
    name: Optional[str] = _text("The user, group or service account name.")
    namespace: Optional[str] = _text("The ServiceAccount's namespace (empty for Users and Groups).", "")

    def __str__(self) -> str:
        """`Kind "name"`, `ServiceAccount "ns/name"` (only a ServiceAccount has a namespace), as messages name it."""
        if self.namespace:
            return f"{self.kind} {go_quote(f'{self.namespace}/{self.name}')}"
        return f"{self.kind} {go_quote(self.name or '')}"


class InsightGrant(InsightValue):
    """One rule that grants: the binding, the role its roleRef names, and the rule's index there."""

    binding: Optional[InsightObjectRef] = _text("The ClusterRoleBinding or RoleBinding.")
    role: Optional[InsightObjectRef] = _text("The role the binding's roleRef names.")
    rule_index: Optional[int] = _text("The index of the rule in the role's rules.")
    rule: Optional[PolicyRule] = _text("The rule itself.")


# ---- AccessExplanation --------------------------------------------------------------------------

class AttributeCheck(InsightValue):
    """One attribute of the request against what a rule (or binding) allows."""

    _KEEP_EMPTY = frozenset({"requested", "suggestion"})

    attribute: Optional[str] = _text(
        "verb, apiGroup, resource, subresource, resourceName, nonResourceURL or namespace.")
    matched: Optional[bool] = _text("Whether the rule allows the request's value.")
    requested: Optional[str] = _text("The request's value of the attribute.")
    allowed: Optional[list[str]] = _strings("What the rule allows for the attribute.", [])
    suggestion: Optional[str] = _text("A value of the attribute that would match, when one exists.")


class RuleExplanation(InsightValue):
    """One rule of a bound role, checked attribute by attribute."""

    index: Optional[int] = _text("The rule's index in the role.")
    rule: Optional[PolicyRule] = _text("The rule.")
    matched: Optional[bool] = _text("Whether every check matched (the rule allows the request).")
    checks: Optional[list[AttributeCheck]] = list_field(description="One check per attribute.")
    aggregated_from: Optional[list[str]] = _strings(
        "For an aggregated ClusterRole: the ClusterRoles the rule came from.", [])


class BindingExplanation(InsightValue):
    """A binding that applies to the subject, with its role's rules checked."""

    binding: Optional[InsightObjectRef] = _text("The binding.")
    subject: Optional[InsightSubject] = _text("The binding's subject that matched.")
    subject_index: Optional[int] = _text("That subject's index in the binding's subjects.")
    role: Optional[InsightObjectRef] = _text("The role the binding's roleRef names.")
    rules: Optional[list[RuleExplanation]] = list_field(description="The role's rules, checked.", default=[])
    error: Optional[str] = _text("Why the roleRef does not resolve (empty when it does).", "")
    aggregated: Optional[bool] = _text("Whether the role is an aggregated ClusterRole.", False)


class NearMiss(InsightValue):
    """A rule or binding that misses the request by exactly one attribute."""

    _KEEP_EMPTY = frozenset({"requested", "suggestion"})

    kind: Optional[str] = _text("Attribute, Namespace, ClusterScope, Aggregation or RoleRef.")
    attribute: Optional[str] = _text("The one attribute in which it differs from a match.")
    binding: Optional[InsightObjectRef] = _text("The binding that applies (or would).")
    role: Optional[InsightObjectRef] = _text("The role the binding's roleRef names.")
    message: Optional[str] = _text("What is missing, in words.")
    rule_index: Optional[int] = _text("The rule's index (in sourceRole for an Aggregation near miss).")
    rule: Optional[PolicyRule] = _text("The rule that nearly matches.")
    requested: Optional[str] = _text("The request's value of the attribute.")
    suggestion: Optional[str] = _text("The value of the attribute that would match.")
    source_role: Optional[InsightObjectRef] = _text(
        "For an Aggregation near miss: the ClusterRole holding the rule.")
    labels: Optional[dict[str, str]] = map_field(
        description="For an Aggregation near miss: the labels to set on sourceRole so it is aggregated.")


class ExplainedRequest(InsightValue):
    """The request explained: who, and its attributes."""

    user: Optional[str] = _text("The user name.")
    groups: Optional[list[str]] = _strings("The user's groups.")
    verb: Optional[str] = _text("The verb.")
    resource_request: Optional[bool] = _text("True for a resource request, false for a non-resource URL.")
    namespace: Optional[str] = _text("The namespace (empty: cluster-wide or all namespaces).", "")
    api_group: Optional[str] = _text("The API group of the resource.", "")
    resource: Optional[str] = _text("The resource.", "")
    subresource: Optional[str] = _text("The subresource.", "")
    name: Optional[str] = _text("The object's name.", "")
    non_resource_url: Optional[str] = Field(default="", alias="nonResourceURL",
                                            description="The non-resource URL path.")


class AccessExplanationSpec(K8sModel):
    """The request to explain (as a SubjectAccessReview's spec); no user nor groups: the caller."""

    resource_attributes: Optional[ResourceAttributes] = _text("A resource request.")
    non_resource_attributes: Optional[NonResourceAttributes] = _text("A non-resource request.")
    user: Optional[str] = _text("The user to explain the decision for (default: the caller).")
    groups: Optional[list[str]] = _strings("The user's groups.")
    extra: Optional[dict[str, list[str]]] = map_field(description="The user's extra attributes.")
    uid: Optional[str] = _text("The user's UID.")


class AccessExplanationStatus(InsightValue):
    """The whole RBAC evaluation of the request: verdict, bindings, rules checked, near misses."""

    request: Optional[ExplainedRequest] = _text("The request explained.")
    allowed: Optional[bool] = _text("The authorizer's verdict.")
    reason: Optional[str] = _text("The authorizer's reason (the binding, role and rule that allowed).", "")
    evaluation_error: Optional[str] = _text("Errors the authorizer met (ignored bindings).", "")
    privileged_group: Optional[str] = _text("system:masters when the user is allowed everything.", "")
    granted_by: Optional[InsightGrant] = _text("The rule that allowed the request.")
    bindings: Optional[list[BindingExplanation]] = list_field(
        description="Every binding that applies to the user, in the authorizer's order.", default=[])
    near_misses: Optional[list[NearMiss]] = list_field(
        description="Rules and bindings that miss the request by exactly one attribute.", default=[])
    scope: Optional[str] = _text("Cluster or Namespaced: the resource's scope, when served.", "")
    notes: Optional[list[str]] = _strings("Remarks, e.g. that only ClusterRoleBindings grant the resource.", [])


class AccessExplanation(InsightKind):
    """Explains an authorization decision: which binding, role and rule allowed it, and the near misses."""

    spec: Optional[AccessExplanationSpec] = None
    status: Optional[AccessExplanationStatus] = None


# ---- WhoCan -------------------------------------------------------------------------------------

class WhoCanSpec(K8sModel):
    """The request whose subjects are wanted: exactly one of resourceAttributes and nonResourceAttributes."""

    resource_attributes: Optional[ResourceAttributes] = _text(
        "verb, group, resource, subresource, namespace (empty: cluster-wide) and name.")
    non_resource_attributes: Optional[NonResourceAttributes] = _text("verb and path.")


class SubjectAccess(InsightValue):
    """A subject the request is allowed for, with every rule that grants it."""

    subject: Optional[InsightSubject] = _text("The subject, as the binding names it.")
    grants: Optional[list[InsightGrant]] = list_field(description="The rules that grant it.", default=[])
    privileged: Optional[bool] = _text("system:masters: allowed everything before RBAC is asked.", False)


class WhoCanStatus(K8sModel):
    """Who may make the request."""

    namespace: Optional[str] = _text("The namespace the request is authorized in.")
    subjects: Optional[list[SubjectAccess]] = list_field(description="Every subject allowed, sorted.")


class WhoCan(InsightKind):
    """Lists every user, group and service account allowed a request, with the bindings and rules that grant it."""

    spec: Optional[WhoCanSpec] = None
    status: Optional[WhoCanStatus] = None


# ---- AccessMatrix -------------------------------------------------------------------------------

class Access(str, enum.Enum):
    """One cell of the matrix (a `str`, so that it is its JSON value in a row's `access`)."""

    ALLOWED = "allowed"
    DENIED = "denied"
    ALLOWED_BY_WILDCARD = "allowedByWildcard"


class MatrixResource(K8sModel):
    """A resource (or resource/subresource) of an API group."""

    group: Optional[str] = _text("The API group (empty: core).")
    resource: Optional[str] = _text("The resource, or resource/subresource.")


class AccessMatrixSpec(K8sModel):
    """Whose matrix (no user nor groups: the caller's), where, and over which resources and verbs."""

    user: Optional[str] = _text("The user (default: the caller).")
    groups: Optional[list[str]] = _strings("The user's groups.")
    extra: Optional[dict[str, list[str]]] = map_field(description="The user's extra attributes.")
    uid: Optional[str] = _text("The user's UID.")
    namespace: Optional[str] = _text("The namespace (empty: cluster-wide).")
    verbs: Optional[list[str]] = _strings(
        "The columns (default: get, list, watch, create, update, patch, delete, deletecollection).")
    resources: Optional[list[MatrixResource]] = list_field(
        description="The rows (default: what the server serves and what the rules name).")


class AccessMatrixRow(InsightValue):
    """One resource and its cells."""

    _KEEP_EMPTY = frozenset({"api_group", "resource", "access"})

    api_group: Optional[str] = _text("The API group.")
    resource: Optional[str] = _text("The resource.")
    access: Optional[dict[str, str]] = map_field(
        description="Per verb: allowed, denied or allowedByWildcard.")


class AccessMatrixStatus(InsightValue):
    """What the user may do to each resource, verb by verb."""

    user: Optional[str] = _text("The user.")
    groups: Optional[list[str]] = _strings("The user's groups.")
    namespace: Optional[str] = _text("The namespace (empty: cluster-wide).")
    verbs: Optional[list[str]] = _strings("The columns.")
    rows: Optional[list[AccessMatrixRow]] = list_field(description="One row per resource.")

    def cell(self, api_group: str, resource: str, verb: str) -> Access:
        """Return the cell of (`api_group`, `resource`) and `verb`; KeyError when absent."""
        for row in self.rows or ():
            if (row.api_group, row.resource) == (api_group, resource):
                return Access((row.access or {})[verb])
        raise KeyError((api_group, resource))


class AccessMatrix(InsightKind):
    """A subject's access matrix: allowed, denied or allowed by a wildcard, per resource and verb."""

    spec: Optional[AccessMatrixSpec] = None
    status: Optional[AccessMatrixStatus] = None


# ---- RBACLint -----------------------------------------------------------------------------------

class Severity(str, enum.Enum):
    """How urgent a finding is, KubiScan's priorities plus INFO; `rank` orders them (CRITICAL highest)."""

    CRITICAL = "Critical"
    HIGH = "High"
    MEDIUM = "Medium"
    LOW = "Low"
    INFO = "Info"

    @property
    def rank(self) -> int:
        """4 for CRITICAL down to 0 for INFO."""
        return _SEVERITY_RANKS[self]


_SEVERITY_RANKS = {severity: len(Severity) - 1 - i for i, severity in enumerate(Severity)}  # declared highest first

class LintFinding(InsightValue):
    """One finding about an object, at a path inside it."""

    severity: Optional[str] = _text("Critical, High, Medium, Low or Info.")
    kind: Optional[str] = _text("What was found (RiskyGrant, RoleRefNotFound, ...).")
    object: Optional[InsightObjectRef] = _text("The object the finding is about.")
    message: Optional[str] = _text("The finding, in words.")
    path: Optional[str] = _text("Where inside the object (e.g. rules[2].verbs).", "")

    @property
    def level(self) -> Severity:
        """The finding's `severity` as the enum (JSON holds its value)."""
        return Severity(self.severity)


class NamespaceBlocker(_Ordered, InsightValue):
    """An object still in a terminating namespace, with the finalizers it holds."""

    kind: Optional[str] = _text("The object's kind.")
    name: Optional[str] = _text("The object's name.")
    api_version: Optional[str] = _text("The object's apiVersion.", "")
    finalizers: Optional[list[str]] = _strings("The finalizers it still holds.", [])
    deletion_timestamp: Optional[str] = _text("When its deletion was asked, if it was.", "")


class TerminatingNamespace(InsightValue):
    """A namespace being deleted and what keeps it."""

    name: Optional[str] = _text("The namespace.")
    deletion_timestamp: Optional[str] = _text("When its deletion was asked.")
    finalizers: Optional[list[str]] = _strings("Its spec.finalizers.", [])
    metadata_finalizers: Optional[list[str]] = _strings("Its metadata.finalizers.", [])
    blockers: Optional[list[NamespaceBlocker]] = list_field(description="The objects still in it.", default=[])
    unchecked: Optional[list[str]] = _strings("Resources the caller may not list there: not checked.", [])


class RBACLintSpec(K8sModel):
    """Options of the lint."""

    min_severity: Optional[str] = _text("Leave out findings below this severity (default: Info, all).")


class RBACLintStatus(K8sModel):
    """The findings, highest severity first, and the terminating namespaces."""

    findings: Optional[list[LintFinding]] = list_field(description="The findings.")
    terminating_namespaces: Optional[list[TerminatingNamespace]] = list_field(
        description="Namespaces being deleted, with what keeps them.")


class RBACLint(InsightKind):
    """Lints the RBAC policy: dangling references, rules that never match, risky grants, stuck namespaces."""

    spec: Optional[RBACLintSpec] = None
    status: Optional[RBACLintStatus] = None


# ---- AggregationGraph ---------------------------------------------------------------------------

class AggregationNode(InsightValue):
    """A ClusterRole that aggregates others or is aggregated into one."""

    name: Optional[str] = _text("The ClusterRole.")
    aggregated: Optional[bool] = _text("Whether it has an aggregationRule.")
    rules: Optional[int] = _text("How many rules it holds.")
    labels: Optional[dict[str, str]] = map_field(description="Its labels.", default={})
    selectors: Optional[list[str]] = _strings("Its aggregationRule's selectors, as label selectors.", [])
    error: Optional[str] = _text("Why its aggregationRule does not parse.", "")


class AggregationEdge(InsightValue):
    """The aggregationRule of `aggregated` selects `source`."""

    aggregated: Optional[str] = _text("The aggregating ClusterRole.")
    source: Optional[str] = _text("The selected ClusterRole.")
    rule_indexes: Optional[list[int]] = list_field(
        description="The aggregating role's rules that the selected role holds.", default=[])


class AggregationGraphSpec(K8sModel):
    """No options."""


class AggregationGraphStatus(InsightValue):
    """The graph."""

    nodes: Optional[list[AggregationNode]] = list_field(description="The ClusterRoles.", default=[])
    edges: Optional[list[AggregationEdge]] = list_field(description="Who aggregates whom.", default=[])


class AggregationGraph(InsightKind):
    """The aggregation graph of ClusterRoles: which aggregationRule selects which role."""

    spec: Optional[AggregationGraphSpec] = None
    status: Optional[AggregationGraphStatus] = None


# ---- RBACDiff -----------------------------------------------------------------------------------

class Permission(_Ordered, InsightValue):
    """One verb on one resource (at most one name) or non-resource URL, in a namespace or cluster-wide."""

    namespace: Optional[str] = _text("The namespace (empty: cluster-wide).")
    verb: Optional[str] = _text("The verb.")
    api_group: Optional[str] = _text("The API group.", "")
    resource: Optional[str] = _text("The resource (or resource/subresource).", "")
    resource_name: Optional[str] = _text("The one name it is limited to.", "")
    non_resource_url: Optional[str] = Field(default="", alias="nonResourceURL",
                                            description="The non-resource URL.")

    def as_policy_rule(self) -> dict[str, list[str]]:
        """Return the one-verb PolicyRule JSON dict that allows exactly this permission."""
        return permission_rule(*self.sort_key())

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; `apiGroup` is written for a resource even when it is "" (the core group)."""
        out = super().to_dict()
        if self.resource:
            out["apiGroup"] = self.api_group
        return out


def permission_rule(namespace: str, verb: str, api_group: str = "", resource: str = "", resource_name: str = "",
                    non_resource_url: str = "") -> dict[str, list[str]]:
    """The one-verb PolicyRule JSON dict that allows exactly the `Permission` of these fields (`namespace`
    is the binding's business, not the rule's)."""
    if non_resource_url:
        return {"verbs": [verb], "nonResourceURLs": [non_resource_url]}
    rule = {"verbs": [verb], "apiGroups": [api_group], "resources": [resource]}
    if resource_name:
        rule["resourceNames"] = [resource_name]
    return rule


class SubjectDiff(InsightValue):
    """What the change grants and revokes one subject."""

    subject: Optional[InsightSubject] = _text("The subject.")
    granted: Optional[list[Permission]] = list_field(description="Permissions it gains.", default=[])
    revoked: Optional[list[Permission]] = list_field(description="Permissions it loses.", default=[])


class RBACDiffSpec(K8sModel):
    """The objects to apply (or delete), as a server-side dry run answers them."""

    objects: Optional[list[dict[str, Any]]] = list_field(
        description="The objects; those that are not RBAC policy are listed as ignored.")
    delete: Optional[bool] = _text("Diff deleting the objects instead of applying them.")


class RBACDiffStatus(K8sModel):
    """Per subject, the effective permissions granted and revoked (through aggregation too)."""

    subjects: Optional[list[SubjectDiff]] = list_field(description="Subjects whose permissions change.")
    ignored: Optional[list[InsightObjectRef]] = list_field(
        description="Objects of the manifest that are not RBAC policy.")


class RBACDiff(InsightKind):
    """What applying (or deleting) RBAC objects would grant and revoke, per subject."""

    spec: Optional[RBACDiffSpec] = None
    status: Optional[RBACDiffStatus] = None
