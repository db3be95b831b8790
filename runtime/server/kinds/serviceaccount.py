"""Core `ServiceAccount` and its tokens (Kubernetes' `pkg/registry/core/serviceaccount`).

- The object: names are DNS subdomains; `secrets` keep only each
  reference's name; a PUT of a missing one is 404; the deprecated
  `kubernetes.io/enforce-mountable-secrets` annotation earns Kubernetes'
  warning; `kubectl get` prints NAME, SECRETS (a count) and AGE.
- `POST .../serviceaccounts/NAME/token` (subresource `token`, verb create)
  answers an authentication/v1 `TokenRequest` holding a signed token
  (`runtime.server.tokens`), as Kubernetes' `TokenREST`: `metadata.name` must be
  the service account's if set (422), `spec.expirationSeconds` defaults to
  3600 and must lie in [600, 2^32] (422; above the server's maximum it is
  shortened, with a warning), `spec.audiences` defaults to the server's,
  the service account must exist (404). `spec.boundObjectRef` binds the
  token to an object in the same namespace: it must exist (404) and match
  a given uid (409); the token dies with it.
- `token_user(claims, lookup)`: the user a verified token authenticates
  as, once the service account still exists with the uid the token names
  (and is not being deleted), and so does its bound object; else
  `TokenError` in Kubernetes' words.

Departure: Kubernetes binds tokens to Pods, Secrets and Nodes only, which
miniplane does not serve; here any namespaced object of a served kind in
the service account's namespace can be bound.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Awaitable, Callable

from runtime import models
from runtime.machinery import errors
from runtime.models.catalog import TOKEN_REQUEST
from runtime.server.kinds.base import PolicyContext, Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.decoding import decode_object
from runtime.server.kinds.parts import TokenIssuer
from runtime.server.kinds.subresources import ActionSubresource, Subresource
from runtime.server.rbac.user import UserInfo, service_account_groups, service_account_username
from runtime.machinery.options import Body
from runtime.server.tokens import (
    CREDENTIAL_ID_KEY, DEFAULT_EXPIRATION_SECONDS, LEEWAY_SECONDS, MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS,
    TokenClaims, TokenError,
)
from runtime.machinery.validation.fielderrors import FieldError, invalid, invalid_error

__all__ = ["ServiceAccountStrategy", "TokenRequestSubresource", "TOKEN_SUBRESOURCE", "ENFORCE_MOUNTABLE_SECRETS"]

TOKEN_SUBRESOURCE = "token"
#: Deprecated in Kubernetes 1.32 (a warning on create and update).
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"

#: Reads one object of the watch cache: (resource type, namespace, name) -> object or None.
Lookup = Callable[[Any, str, str], "dict[str, Any] | None"]


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), len(obj.get("secrets") or ()), age(meta.get("creationTimestamp"))]


def _clean_secret_references(obj: dict[str, Any]) -> None:
    # Kubernetes' cleanSecretReferences: a reference keeps only its name.
    if obj.get("secrets"):
        obj["secrets"] = [{"name": s["name"]} if s.get("name") else {} for s in obj["secrets"]]


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_rfc3339(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def _deleted_before(obj: dict[str, Any], cutoff: float) -> bool:
    stamp = obj["metadata"].get("deletionTimestamp")
    try:
        return bool(stamp) and _parse_rfc3339(stamp) < cutoff
    except ValueError:
        return True


class TokenRequestSubresource(ActionSubresource):
    """A ServiceAccount's `token` subresource: a TokenRequest answered with a signed token, as
    Kubernetes' TokenREST (see the module doc)."""

    name = TOKEN_SUBRESOURCE
    model = models.TokenRequest

    def __init__(self, scheme: Any, rt: Any) -> None:
        self.scheme = scheme
        self.kind = (scheme.authn_group, "v1", "TokenRequest")
        # An unregistered ResourceType of the TokenRequest kind (the account's own type: no import cycle).
        self._token_rt = type(rt)(TOKEN_REQUEST, scheme.authn_group)

    def decode(self, body: Body, field_validation: str) -> tuple[dict[str, Any], list[str]]:
        return decode_object(self._token_rt, body, field_validation=field_validation)

    async def create(self, policy: PolicyContext, user: UserInfo, namespace: str, name: str,
                     request: dict[str, Any],
                     load: Callable[[], Awaitable[dict[str, Any]]]) -> tuple[dict[str, Any], list[str]]:
        """A TokenRequest answered (see the module doc); `load()` reads the service account (404 if missing)."""
        group_kind = f"TokenRequest.{self.scheme.authn_group}"
        meta = request["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise invalid_error("TokenRequest", group_kind, name, [
                invalid("metadata.name", meta["name"], "must match the service account name if specified")])
        account = await load()
        tokens = policy.tokens
        spec = request.setdefault("spec", {})
        if not spec.get("audiences"):
            spec["audiences"] = list(tokens.audiences)
        if spec.get("expirationSeconds") is None:
            spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS
        now = tokens.clock()
        meta.update(name=name, namespace=namespace, creationTimestamp=_rfc3339(now))
        request.pop("status", None)
        seconds = spec["expirationSeconds"]
        errs: list[FieldError] = []
        if seconds < MIN_EXPIRATION_SECONDS:
            errs.append(invalid("spec.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
        if seconds > MAX_EXPIRATION_SECONDS:
            errs.append(FieldError("FieldValueTooLong", "spec.expirationSeconds",
                                   f"may not be more than {MAX_EXPIRATION_SECONDS} bytes"))
        if errs:
            raise invalid_error("TokenRequest", group_kind, "", errs)
        bound = await self._bound_object(policy, namespace, spec.get("boundObjectRef"))
        warnings: list[str] = []
        if tokens.max_expiration_seconds and seconds > tokens.max_expiration_seconds:
            warnings.append(f"requested expiration of {seconds} seconds shortened to "
                            f"{tokens.max_expiration_seconds} seconds")
            seconds = spec["expirationSeconds"] = tokens.max_expiration_seconds
        account_meta = account["metadata"]
        token, expiry = tokens.issue(namespace, name, account_meta.get("uid", ""), audiences=tuple(spec["audiences"]),
                                     expiration_seconds=seconds, bound=bound)
        answer = {"apiVersion": request["apiVersion"], "kind": request["kind"], "metadata": meta, "spec": spec,
                  "status": {"token": token, "expirationTimestamp": _rfc3339(expiry)}}
        return answer, warnings

    async def _bound_object(self, policy: PolicyContext, namespace: str,
                            ref: dict[str, Any] | None) -> tuple[str, str, str, str] | None:
        if ref is None:
            return None
        api_version, kind, name = ref.get("apiVersion") or "", ref.get("kind") or "", ref.get("name") or ""
        rt = self.scheme.by_api_version_kind(api_version, kind)
        if rt is None or rt.virtual or not rt.namespaced:
            group, _, version = api_version.rpartition("/")
            raise errors.BadRequest(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
        current = await policy.read_current(rt, rt.storage_key(namespace, name), name)
        if current is None:
            raise errors.NotFound(f'{rt.group_resource} "{name}" not found', name=name, group=rt.group,
                                  kind=rt.plural)
        uid = current.obj["metadata"].get("uid", "")
        if ref.get("uid") and ref["uid"] != uid:
            raise errors.Conflict(f'Operation cannot be fulfilled on {kind}{"." + rt.group if rt.group else ""} '
                                  f'"{name}": the UID in the bound object reference ({ref["uid"]}) does not match '
                                  "the UID in record. The object might have been deleted and then recreated",
                                  name=name, group=rt.group, kind=kind)
        return rt.api_version, rt.kind, name, uid


class ServiceAccountStrategy(Strategy, TokenIssuer):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False
    # Kubernetes' printServiceAccount: the number of secrets, then the age.
    columns = Columns((NAME_COLUMN, column("Secrets", models.ServiceAccount.model_fields["secrets"].description or ""),
                       AGE_COLUMN), _cells)

    def __init__(self, scheme: Any, rt: Any) -> None:
        super().__init__(scheme, rt)
        self.subresources = {TOKEN_SUBRESOURCE: TokenRequestSubresource(scheme, rt)}

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        _clean_secret_references(obj)

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)
        _clean_secret_references(new)

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        if ENFORCE_MOUNTABLE_SECRETS in (new["metadata"].get("annotations") or {}):
            return [f"metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; prefer separate "
                    "namespaces to isolate access to mounted secrets"]
        return []

    # ---- tokens as credentials -----------------------------------------------------------------------

    def token_user(self, claims: TokenClaims, lookup: Lookup, now: float) -> UserInfo:
        """The user a verified token is, once its service account (and bound object) still stand.

        Raises TokenError in Kubernetes' words (`serviceaccounts "x" not found`,
        `service account UID (a) does not match claim (b)`, ...).
        """
        namespace, name = claims.namespace, claims.name
        cutoff = now - LEEWAY_SECONDS
        account = lookup(self.rt, namespace, name)
        if account is None:
            raise TokenError(f'{self.rt.plural} "{name}" not found')
        uid = account["metadata"].get("uid", "")
        if uid != claims.uid:
            raise TokenError(f"service account UID ({uid}) does not match claim ({claims.uid})")
        if _deleted_before(account, cutoff):
            raise TokenError(f"service account {namespace}/{name} has been deleted")
        extra: dict[str, list[str]] = {}
        if claims.bound is not None:
            api_version, kind, bound_name, bound_uid = claims.bound
            rt = self.scheme.by_api_version_kind(api_version, kind)
            bound = lookup(rt, namespace, bound_name) if rt is not None else None
            if bound is None or _deleted_before(bound, cutoff):
                raise TokenError("service account token has been invalidated")
            actual = bound["metadata"].get("uid", "")
            if actual != bound_uid:
                word = kind.lower()
                raise TokenError(f"{word} UID ({actual}) does not match service account {word} ref claim "
                                 f"({bound_uid})")
            extra[f"authentication.kubernetes.io/{kind.lower()}-name"] = [bound_name]
            extra[f"authentication.kubernetes.io/{kind.lower()}-uid"] = [bound_uid]
        if claims.jti:
            extra[CREDENTIAL_ID_KEY] = [f"JTI={claims.jti}"]
        return UserInfo(service_account_username(namespace, name), uid=claims.uid,
                        groups=service_account_groups(namespace), extra=extra)
