"""What an admission author writes: a `Webhook` descriptor around `async def admit(request) -> answer`.

`Webhook(name, admit, rules=[Rule(...)], mutating=False, ...)` says what it
admits and how the API server calls it, with the fields and defaults of a
`ValidatingWebhookConfiguration`'s (or `MutatingWebhookConfiguration`'s)
webhook: `failure_policy` (Fail), `side_effects` (None), `timeout_seconds`
(10), `match_policy` (Equivalent), `namespace_selector`, `object_selector`,
`reinvocation_policy` (Never; mutating only). `model` types
`request.object` (default: the kind's model, see `runtime.webhook.review`).

`admit(request: Request)` answers one of:
- `Allowed(warnings=..., audit_annotations=...)`;
- `Denied(message, code=403, reason="")`: refused in kube's words,
  `admission webhook "<name>" denied the request: <message>`, with `code`
  (reason: kube's reason for the code when not given);
- `Patch(operations=[...])` (an RFC 6902 patch) or `Patch(object=changed)`
  (the changed object, a dict or model: the patch is computed, as
  controller-runtime's `PatchResponseFromRaw`), allowed and applied.
An exception raised by `admit` is answered as controller-runtime's
`Errored(500, err)`: a denial with code 500 and the exception's text.

Data only: nothing here calls anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, NamedTuple, Sequence, Union

from pydantic import BaseModel

from runtime.machinery.errors import reason_for_code

__all__ = ["Rule", "Webhook", "Request", "UserInfo", "GroupVersionKind", "GroupVersionResource", "Allowed",
           "Denied", "Patch", "Answer", "AdmitFunction", "OPERATIONS"]

#: admissionregistration/v1's operation names ("*": all).
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT", "*")
_SCOPES = ("*", "Cluster", "Namespaced")
_FAILURE_POLICIES = ("Fail", "Ignore")
# v1 accepts only these two (Some and Unknown were v1beta1's).
_SIDE_EFFECTS = ("None", "NoneOnDryRun")
_MATCH_POLICIES = ("Exact", "Equivalent")
_REINVOCATION = ("Never", "IfNeeded")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@dataclass(frozen=True)
class Rule:
    """A RuleWithOperations: which operations on which group/version/resource (`"pods/status"` names a
    subresource, `"*/*"` everything) in which scope the webhook admits."""

    resources: Sequence[str]
    operations: Sequence[str] = ("*",)
    api_groups: Sequence[str] = ("*",)
    api_versions: Sequence[str] = ("*",)
    scope: str = "*"

    def __post_init__(self) -> None:
        for op in self.operations:
            if op not in OPERATIONS:
                raise ValueError(f"operation {op!r} is not one of {', '.join(OPERATIONS)}")
        if self.scope not in _SCOPES:
            raise ValueError(f"scope {self.scope!r} is not one of {', '.join(_SCOPES)}")
        if not self.resources:
            raise ValueError("a rule names at least one resource")

    def to_dict(self) -> dict[str, Any]:
        """The rule in admissionregistration/v1's JSON form."""
        return {"operations": list(self.operations), "apiGroups": list(self.api_groups),
                "apiVersions": list(self.api_versions), "resources": list(self.resources), "scope": self.scope}


class GroupVersionKind(NamedTuple):
    group: str
    version: str
    kind: str


class GroupVersionResource(NamedTuple):
    group: str
    version: str
    resource: str


@dataclass(frozen=True)
class UserInfo:
    """The requesting user, as the AdmissionReview's `userInfo`."""

    username: str = ""
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    """An admission request (an AdmissionReview's `request`), typed.

    `object` and `old_object` are the webhook's `model` (or the kind's
    model) when one is known, else the JSON dicts; `raw_object` and
    `raw_old_object` are the JSON as sent. `operation` is kube's
    (CREATE, UPDATE, DELETE, CONNECT); `options` the operation's options
    object (CreateOptions, UpdateOptions, DeleteOptions) as JSON.
    """

    uid: str
    kind: GroupVersionKind
    resource: GroupVersionResource
    operation: str
    user_info: UserInfo
    object: Any
    old_object: Any
    raw_object: dict[str, Any] | None
    raw_old_object: dict[str, Any] | None
    name: str = ""
    namespace: str = ""
    sub_resource: str = ""
    dry_run: bool = False
    options: dict[str, Any] | None = None
    request_kind: GroupVersionKind | None = None
    request_resource: GroupVersionResource | None = None
    request_sub_resource: str = ""


@dataclass(frozen=True)
class Allowed:
    """Admit the request unchanged."""

    warnings: Sequence[str] = ()
    audit_annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Denied:
    """Refuse the request: `admission webhook "<name>" denied the request: <message>`, answered with `code`
    (kube answers 400 for a code below 400) and `reason` (default: kube's reason for the code)."""

    message: str
    code: int = 403
    reason: str = ""
    warnings: Sequence[str] = ()
    audit_annotations: Mapping[str, str] = field(default_factory=dict)

    def status(self) -> dict[str, Any]:
        """The response's `status` (a metav1.Status), as controller-runtime's `Denied` fills it."""
        status: dict[str, Any] = {"code": self.code, "reason": self.reason or reason_for_code(self.code)}
        if self.message:
            status["message"] = self.message
        return status


@dataclass(frozen=True)
class Patch:
    """Admit the request changed: by `operations` (RFC 6902) or to `object` (the changed object: the patch
    from the request's object to it is computed). Exactly one of the two."""

    operations: Sequence[Mapping[str, Any]] | None = None
    object: Any = None
    warnings: Sequence[str] = ()
    audit_annotations: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.operations is None) == (self.object is None):
            raise ValueError("Patch takes exactly one of operations= and object=")


Answer = Union[Allowed, Denied, Patch]
AdmitFunction = Callable[[Request], Awaitable[Answer]]


@dataclass(frozen=True)
class Webhook:
    """One admission webhook: its name (a domain of at least three segments, as kube requires), its
    function, what it admits and how it is called (the module doc gives the defaults).

    `path` is where `WebhookServer` serves it (default `/validate/<name>` or
    `/mutate/<name>`). Raises ValueError for a value the API server would
    refuse in a webhook configuration.
    """

    name: str
    admit: AdmitFunction
    rules: Sequence[Rule]
    mutating: bool = False
    failure_policy: str = "Fail"
    side_effects: str = "None"
    timeout_seconds: int = 10
    match_policy: str = "Equivalent"
    namespace_selector: Mapping[str, Any] | None = None
    object_selector: Mapping[str, Any] | None = None
    reinvocation_policy: str = "Never"
    model: type[BaseModel] | None = None
    path: str = ""

    def __post_init__(self) -> None:
        labels = self.name.split(".")
        if len(self.name) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in labels):
            raise ValueError(f"webhook name {self.name!r} is not a DNS-1123 subdomain")
        if len(labels) < 3:
            raise ValueError(f"webhook name {self.name!r} should be a domain with at least three segments "
                             f"separated by dots")
        for value, allowed, what in ((self.failure_policy, _FAILURE_POLICIES, "failure_policy"),
                                     (self.side_effects, _SIDE_EFFECTS, "side_effects"),
                                     (self.match_policy, _MATCH_POLICIES, "match_policy"),
                                     (self.reinvocation_policy, _REINVOCATION, "reinvocation_policy")):
            if value not in allowed:
                raise ValueError(f"{what} {value!r} is not one of {', '.join(allowed)}")
        if not 1 <= self.timeout_seconds <= 30:
            raise ValueError("timeout_seconds must be between 1 and 30 seconds")
        if self.reinvocation_policy != "Never" and not self.mutating:
            raise ValueError("reinvocation_policy is a mutating webhook's")
        if not self.rules:
            raise ValueError("a webhook admits by at least one rule")
        if self.path and not self.path.startswith("/"):
            raise ValueError(f"path {self.path!r} does not start with /")

    @property
    def served_path(self) -> str:
        """The path `WebhookServer` serves this webhook at."""
        return self.path or f"/{'mutate' if self.mutating else 'validate'}/{self.name}"
