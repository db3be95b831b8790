"""Auditing, as kube-apiserver's: an `audit.k8s.io/v1` Policy decides each request's level, and one
`audit.k8s.io/v1` Event per stage is written as a JSON line (`api.auditlog`).

Policy (`load_policy(text)`; Kubernetes' format and checks): `rules` in order,
the first that matches a request decides its `level` (`None`, `Metadata`,
`Request`, `RequestResponse`); no match is `None`. A rule matches when every
field it sets matches: `users` (the user's name), `userGroups` (any of its
groups), `verbs`, `namespaces` ("" is a cluster-scoped resource), `resources`
(`group`, `resources` with `*`, `res/sub`, `*/sub`, `res/*`, and
`resourceNames`) for resource requests, `nonResourceURLs` (exact, or a prefix
ending with `*`) for the others. `omitStages` (policy-wide and per rule) drops
stages; `omitManagedFields` drops `metadata.managedFields` from logged objects.
The policy is evaluated for the authenticated user, before impersonation.

Events carry Kubernetes' fields: `level`, `auditID` (the request's `Audit-ID`
header, else a new UUID; answered in the `Audit-Id` header, as every request
is, audited or not: `api.filters`), `stage`,
`requestURI`, `verb`, `user`, `impersonatedUser`, `sourceIPs`
(X-Forwarded-For, X-Real-Ip, the peer), `userAgent`, `objectRef`,
`responseStatus`, `requestObject` (level Request and up), `responseObject`
(RequestResponse), `requestReceivedTimestamp`, `stageTimestamp`, and the
annotations `authorization.k8s.io/decision` (`allow`, `forbid`) and
`authorization.k8s.io/reason`. Stages: `RequestReceived`, `ResponseStarted`
(watches), `ResponseComplete`, `Panic` (an unexpected error; instead of
ResponseComplete).

`default_policy(domain)` is the policy used when `--audit-log-path` comes without
`--audit-policy-file` (`api/audit-policy.yaml`: Kubernetes' recommended policy,
kube-up's and GKE's): Secrets, ConfigMaps, TokenRequests and TokenReviews at
`Metadata`, never their objects. A user's policy is taken as written: one that
asks `Request` or more of Secrets logs their data, as kube-apiserver does (it
does not redact).

Never a credential: headers are not logged, and any `token` field of a logged
object (TokenReview's spec, TokenRequest's status) is replaced by `<redacted>`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pathlib import Path

import yaml

from api.auditlog import AuditLog
from runtime.server.kinds import AUDIT_ANNOTATIONS, AUDIT_LEVEL
from runtime.server.rbac import RequestInfo
from runtime.server.rbac.user import UserInfo

__all__ = ["Auditor", "AuditRecord", "Policy", "PolicyRule", "PolicyError", "load_policy", "current_record",
           "default_policy", "LEVELS", "STAGES", "RequestFacts", "GroupResources", "source_ips", "request_uri", "new_audit_id"]

LEVELS = ("None", "Metadata", "Request", "RequestResponse")
STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")
_RANK = {level: i for i, level in enumerate(LEVELS)}
_POLICY_VERSIONS = ("audit.k8s.io/v1", "audit.k8s.io/v1beta1")
_REDACTED = "<redacted>"
_DEFAULT_POLICY = Path(__file__).with_name("audit-policy.yaml")

_log = logging.getLogger(__name__)

_CURRENT: ContextVar["AuditRecord | None"] = ContextVar("miniplane_audit_record", default=None)


def current_record() -> "AuditRecord | None":
    """The audit record of the request being served (None when it is not audited)."""
    return _CURRENT.get()


class PolicyError(ValueError):
    """A policy file Kubernetes would refuse; the message says where."""


@dataclass(frozen=True)
class GroupResources:
    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class PolicyRule:
    level: str
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool | None = None

    def matches(self, user: UserInfo | None, info: RequestInfo) -> bool:
        if self.users and (user is None or user.name not in self.users):
            return False
        if self.user_groups and (user is None or not any(g in self.user_groups for g in user.groups)):
            return False
        if self.verbs and info.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(info)
        if self.non_resource_urls:
            return not info.resource_request and any(_path_matches(info.path, spec) for spec in self.non_resource_urls)
        return True

    def _matches_resource(self, info: RequestInfo) -> bool:
        if not info.resource_request:
            return False
        if self.namespaces and info.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        combined = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        for gr in self.resources:
            if gr.group != info.api_group:
                continue
            if not gr.resources:
                return True
            if gr.resource_names and info.name not in gr.resource_names:
                continue
            for res in gr.resources:
                if res in (combined, "*"):
                    return True
                if info.subresource and res.startswith("*/") and info.subresource == res[2:]:
                    return True
                if res.endswith("/*") and info.resource == res[:-2]:
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    if spec in ("*", path):
        return True
    return spec.endswith("*") and path.startswith(spec.rstrip("*"))


@dataclass(frozen=True)
class Policy:
    rules: tuple[PolicyRule, ...] = ()
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False

    def evaluate(self, user: UserInfo | None, info: RequestInfo) -> tuple[str, frozenset[str], bool]:
        """(level, stages to omit, omit managed fields) for a request; level None when no rule matches."""
        for rule in self.rules:
            if rule.matches(user, info):
                omit = rule.omit_managed_fields if rule.omit_managed_fields is not None else self.omit_managed_fields
                return rule.level, self.omit_stages | rule.omit_stages, omit
        return "None", self.omit_stages, self.omit_managed_fields


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(f"{where}: must be a list of strings")
    return tuple(value)


def _stages(value: Any, where: str) -> frozenset[str]:
    stages = _strings(value, where)
    for i, stage in enumerate(stages):
        if stage not in STAGES:
            raise PolicyError(f'{where}[{i}]: Unsupported value: "{stage}": supported values: '
                              + ", ".join(f'"{s}"' for s in STAGES))
    return frozenset(stages)


_RULE_FIELDS = {"level", "users", "userGroups", "verbs", "resources", "namespaces", "nonResourceURLs", "omitStages",
                "omitManagedFields"}


def _rule(doc: Any, where: str) -> PolicyRule:
    if not isinstance(doc, dict):
        raise PolicyError(f"{where}: must be an object")
    unknown = sorted(set(doc) - _RULE_FIELDS)
    if unknown:
        raise PolicyError(f'{where}: unknown field "{unknown[0]}"')
    level = doc.get("level")
    if level not in LEVELS:
        raise PolicyError(f'{where}.level: ' + ("Required value" if level is None else
                          f'Unsupported value: "{level}": supported values: '
                          + ", ".join(f'"{v}"' for v in LEVELS)))
    resources = []
    for i, gr in enumerate(doc.get("resources") or []):
        if not isinstance(gr, dict) or set(gr) - {"group", "resources", "resourceNames"}:
            raise PolicyError(f"{where}.resources[{i}]: must be an object with group, resources, resourceNames")
        names = _strings(gr.get("resources"), f"{where}.resources[{i}].resources")
        for res in names:
            if res != "*" and res.count("*") and not (res.startswith("*/") or res.endswith("/*")):
                raise PolicyError(f'{where}.resources[{i}].resources: Invalid value: "{res}": '
                                  "wildcards are supported as * , res/* or */sub")
        resource_names = _strings(gr.get("resourceNames"), f"{where}.resources[{i}].resourceNames")
        if resource_names and any("*" in res for res in names):
            raise PolicyError(f"{where}.resources[{i}].resourceNames: Invalid value: resourceNames cannot be used "
                              "with wildcard resources")
        resources.append(GroupResources(gr.get("group") or "", names, resource_names))
    urls = _strings(doc.get("nonResourceURLs"), f"{where}.nonResourceURLs")
    for url in urls:
        if url != "*" and (not url.startswith("/") or "*" in url[:-1]):
            raise PolicyError(f'{where}.nonResourceURLs: Invalid value: "{url}": non-resource URLs start with "/" '
                              "and may end with a *")
    namespaces = _strings(doc.get("namespaces"), f"{where}.namespaces")
    if urls and (resources or namespaces):
        raise PolicyError(f"{where}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources "
                          "and non-resource URLs")
    omit_managed = doc.get("omitManagedFields")
    if omit_managed is not None and not isinstance(omit_managed, bool):
        raise PolicyError(f"{where}.omitManagedFields: must be true or false")
    return PolicyRule(level, _strings(doc.get("users"), f"{where}.users"),
                      _strings(doc.get("userGroups"), f"{where}.userGroups"), _strings(doc.get("verbs"), f"{where}.verbs"),
                      tuple(resources), namespaces, urls, _stages(doc.get("omitStages"), f"{where}.omitStages"),
                      omit_managed)


def load_policy(text: str) -> Policy:
    """The policy in `text` (YAML or JSON). Raises PolicyError as Kubernetes would refuse it."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyError(f"not YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise PolicyError("an audit policy must be an object (apiVersion: audit.k8s.io/v1, kind: Policy)")
    if doc.get("kind") != "Policy" or doc.get("apiVersion") not in _POLICY_VERSIONS:
        raise PolicyError(f'expected apiVersion audit.k8s.io/v1, kind Policy; got {doc.get("apiVersion")!r}, '
                          f'{doc.get("kind")!r}')
    rules = doc.get("rules")
    if not isinstance(rules, list) or not rules:
        raise PolicyError("rules: Required value: at least one rule is required")
    omit = doc.get("omitManagedFields", False)
    if not isinstance(omit, bool):
        raise PolicyError("omitManagedFields: must be true or false")
    return Policy(tuple(_rule(r, f"rules[{i}]") for i, r in enumerate(rules)), _stages(doc.get("omitStages"),
                  "omitStages"), omit)



def default_policy(domain: str) -> Policy:
    """The default policy (`api/audit-policy.yaml`) for the API groups under `domain`."""
    return load_policy(_DEFAULT_POLICY.read_text().replace("${DOMAIN}", domain))


# ---- events ----------------------------------------------------------------------------------------

def _timestamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond:06d}Z"


def _user(user: UserInfo | None) -> dict[str, Any]:
    return {} if user is None else user.as_json()


def _redacted(value: Any, omit_managed: bool, parent: str = "") -> Any:
    """`value` with every `token` string replaced, and `metadata.managedFields` dropped when asked."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "token" and isinstance(item, str):
                out[key] = _REDACTED
            elif key == "managedFields" and omit_managed and parent == "metadata":
                continue
            else:
                out[key] = _redacted(item, omit_managed, key)
        return out
    if isinstance(value, list):
        return [_redacted(v, omit_managed) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return _REDACTED
    return value


@dataclass
class RequestFacts:
    """What the HTTP layer tells the auditor of a request."""

    uri: str
    source_ips: list[str]
    user_agent: str
    audit_id: str


@dataclass
class AuditRecord:
    """One audited request: its level, and the events written so far."""

    auditor: "Auditor"
    level: str
    omit: frozenset[str]
    omit_managed: bool
    info: RequestInfo
    facts: RequestFacts
    user: UserInfo | None
    received: dt.datetime
    impersonated: UserInfo | None = None
    annotations: dict[str, str] = field(default_factory=dict)
    request_object: Any = None
    request_meta: dict[str, Any] | None = None
    response_object: Any = None
    response_status: dict[str, Any] | None = None
    events: int = 0
    _authorizing: bool = False

    @property
    def wants_request(self) -> bool:
        return _RANK[self.level] >= _RANK["Request"]

    @property
    def wants_response(self) -> bool:
        return self.level == "RequestResponse"

    def acting_as(self, user: UserInfo, requester: UserInfo | None) -> None:
        """Authentication and impersonation are done: `user` is who the request acts as."""
        if user is not requester:
            self.impersonated = user
        self._authorizing = True

    def decided(self, allowed: bool, reason: str) -> None:
        """The authorizer's first decision on the request itself (impersonation checks are not it)."""
        if self._authorizing and "authorization.k8s.io/decision" not in self.annotations:
            self.annotations["authorization.k8s.io/decision"] = "allow" if allowed else "forbid"
            self.annotations["authorization.k8s.io/reason"] = reason

    def log_request_object(self, data: Any) -> None:
        """The decoded request body: it completes `objectRef` (name, namespace, uid, resourceVersion, as
        kube-apiserver's LogRequestObject), and is logged at level Request and up."""
        if self.request_meta is None and isinstance(data, dict) and isinstance(data.get("metadata"), dict):
            self.request_meta = data["metadata"]
        if self.wants_request and self.request_object is None:
            self.request_object = data

    def log_response_object(self, doc: Any) -> None:
        if self.wants_response:
            self.response_object = doc

    def log_status(self, status: dict[str, Any]) -> None:
        self.response_status = {k: v for k, v in status.items() if k not in ("kind", "apiVersion")}

    def started(self, code: int) -> None:
        """A long-running answer's headers are out (watches): the ResponseStarted event."""
        self._emit("ResponseStarted", code)

    def complete(self, code: int, *, panicked: bool = False) -> None:
        """The answer is complete: the ResponseComplete event (Panic for an unexpected error)."""
        self._emit("Panic" if panicked else "ResponseComplete", code)

    def received_event(self) -> None:
        self._emit("RequestReceived", 0)

    def _emit(self, stage: str, code: int) -> None:
        if stage in self.omit:
            return
        info, facts = self.info, self.facts
        event: dict[str, Any] = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": self.level,
                                 "auditID": facts.audit_id, "stage": stage, "requestURI": facts.uri,
                                 "verb": info.verb, "user": _user(self.user)}
        if self.impersonated is not None:
            event["impersonatedUser"] = _user(self.impersonated)
        event["sourceIPs"] = facts.source_ips
        if facts.user_agent:
            event["userAgent"] = facts.user_agent
        if info.resource_request:
            event["objectRef"] = self._object_ref()
        if stage != "RequestReceived":
            if self.response_status is not None and code >= 300:
                event["responseStatus"] = dict(self.response_status, code=code)
            else:
                event["responseStatus"] = {"metadata": {}, "code": code}
        if self.request_object is not None and stage != "RequestReceived":
            event["requestObject"] = _redacted(self.request_object, self.omit_managed)
        if self.response_object is not None and stage in ("ResponseComplete", "Panic"):
            event["responseObject"] = _redacted(self.response_object, self.omit_managed)
        event["requestReceivedTimestamp"] = _timestamp(self.received)
        event["stageTimestamp"] = _timestamp(self.auditor.now())
        if self.annotations:
            event["annotations"] = dict(self.annotations)
        self.events += 1
        self.auditor.write(event)

    def _object_ref(self) -> dict[str, Any]:
        info = self.info
        meta = self.request_meta or {}
        ref: dict[str, Any] = {"resource": info.resource}
        namespace = info.namespace or meta.get("namespace") or ""
        if namespace:
            ref["namespace"] = namespace
        name = info.name or meta.get("name") or ""
        if name:
            ref["name"] = name
        if meta.get("uid"):
            ref["uid"] = meta["uid"]
        if info.api_group:
            ref["apiGroup"] = info.api_group
        ref["apiVersion"] = info.api_version
        if meta.get("resourceVersion"):
            ref["resourceVersion"] = meta["resourceVersion"]
        if info.subresource:
            ref["subresource"] = info.subresource
        return ref


class Auditor:
    """Evaluates `policy` for each request and writes its events to `log` (both None: auditing off).

    `on_event` is told of every event written (the `apiserver_audit_event_total` counter) and
    `on_level` of each request's level.
    """

    def __init__(self, policy: Policy | None = None, log: AuditLog | None = None, *,
                 on_event: Callable[[], None] = lambda: None, on_level: Callable[[str], None] = lambda _: None,
                 on_error: Callable[[], None] = lambda: None, now: Callable[[], dt.datetime] | None = None) -> None:
        self.policy = policy if log is not None else None
        self.log = log
        self._on_event = on_event
        self._on_level = on_level
        self._on_error = on_error
        self.now = now if now is not None else (lambda: dt.datetime.now(dt.timezone.utc))

    @property
    def enabled(self) -> bool:
        return self.policy is not None

    def begin(self, info: RequestInfo, user: UserInfo | None, facts: Callable[[], RequestFacts]) -> AuditRecord | None:
        """Evaluate the policy for a request; at a level above None, write RequestReceived and make the
        record current (`current_record()`). Returns None when the request is not audited."""
        if self.policy is None:
            return None
        level, omit, omit_managed = self.policy.evaluate(user, info)
        self._on_level(level)
        if level == "None":
            return None
        record = AuditRecord(self, level, omit, omit_managed, info, facts(), user, self.now())
        _CURRENT.set(record)
        AUDIT_ANNOTATIONS.set(record.annotations)  # admission's annotations (webhooks, policies) join the event
        AUDIT_LEVEL.set(level)  # which of them: kube leaves a webhook's patch out below level Request
        record.received_event()
        return record

    def write(self, event: dict[str, Any]) -> None:
        """Write one event. A log that cannot be written (a full disk) is reported and counted
        (`apiserver_audit_error_total`), and the request is still answered, as kube-apiserver's
        default `blocking` mode does."""
        assert self.log is not None
        try:
            self.log.write(json.dumps(event, separators=(",", ":"), ensure_ascii=False, default=str) + "\n")
        except OSError as exc:
            self._on_error()
            _log.error("audit: cannot write event %s (stage %s): %s", event.get("auditID"), event.get("stage"), exc)
            return
        self._on_event()

    def close(self) -> None:
        if self.log is not None:
            self.log.close()


def source_ips(headers: Any, peer: str | None) -> list[str]:
    """Kubernetes' SourceIPs: the X-Forwarded-For chain, then X-Real-Ip, then the peer, each once."""
    ips: list[str] = []
    for part in (headers.get("X-Forwarded-For") or "").split(","):
        if part.strip():
            ips.append(part.strip())
    real = (headers.get("X-Real-Ip") or "").strip()
    if real and real not in ips:
        ips.append(real)
    if peer and peer not in ips:
        ips.append(peer)
    return ips


def request_uri(raw_path: bytes, query: bytes) -> str:
    """The request URI as sent: path and query."""
    path = raw_path.decode("latin-1")
    return f"{path}?{query.decode('latin-1')}" if query else path


def new_audit_id(asked: str | None) -> str:
    """The request's `Audit-ID` header when sent, else a new UUID."""
    return asked.strip() if asked and asked.strip() else str(uuid.uuid4())

