"""Service account token Secrets, as kube-controller-manager's token controller (`pkg/controller/serviceaccount/tokens_controller.go`).

For a Secret of type `kubernetes.io/service-account-token` whose annotation
`kubernetes.io/service-account.name` names a ServiceAccount of its
namespace:

- while the ServiceAccount stands (with the uid of the Secret's
  `kubernetes.io/service-account.uid` annotation, when it has one), the
  Secret gets what it lacks: `data.token` (a legacy token naming the Secret,
  `TokenSigner.issue_legacy`), `data["ca.crt"]` (the server's CA, when there
  is one) and `data.namespace`, and the annotations name the
  ServiceAccount and its uid. The write carries the resourceVersion read, so
  a Secret changed meanwhile is left to that change's event;
- once the ServiceAccount is gone (or recreated: another uid), the Secret
  is deleted with its uid as precondition: a Secret naming a missing
  ServiceAccount as soon as it is seen, and every token Secret of a
  ServiceAccount when it goes.

The ServiceAccount is read from the cache, and live on a cache miss, as
Kubernetes does: a Secret created just after its ServiceAccount is not
deleted for a cache that lags.

Signing needs the server's private key, handed in as `TokenSigning`: the
server's own controllers get the server's signer and CA from the assembly.
Without one (`miniplane controllers`, out of process) this controller is
not run, as kube-controller-manager runs it only with
`--service-account-private-key-file`.

Caveats: Kubernetes also removes a deleted token Secret from its
ServiceAccount's `secrets` list; this controller does not.
"""

from __future__ import annotations

import base64
import copy
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from runtime.client.interface import Client, ObjectKey, object_meta
from runtime.controller.informer import Informer, ObjectEvent
from runtime.controller.manager import Manager
from runtime.machinery import errors
from runtime.machinery.scheme import ResourceType

__all__ = ["TokenSigning", "LegacyTokenIssuer", "TokensController", "setup", "CONTROLLER_NAME",
           "SERVICE_ACCOUNT_TOKEN", "NAME_KEY", "UID_KEY"]

log = logging.getLogger(__name__)

#: kube-controller-manager's name for it (`--controllers`).
CONTROLLER_NAME = "serviceaccount-token-controller"
#: The Secret type, and its annotations naming the ServiceAccount (core/v1's ServiceAccountNameKey, ...UIDKey).
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
NAME_KEY = "kubernetes.io/service-account.name"
UID_KEY = "kubernetes.io/service-account.uid"
#: The data keys (core/v1's ServiceAccountTokenKey, ServiceAccountRootCAKey, ServiceAccountNamespaceKey).
TOKEN_KEY, CA_KEY, NAMESPACE_KEY = "token", "ca.crt", "namespace"

_BY_ACCOUNT = "serviceaccount"


class LegacyTokenIssuer(Protocol):
    """What signs a legacy token (`runtime.server.tokens.TokenSigner` is one)."""

    def issue_legacy(self, namespace: str, name: str, uid: str, secret: str) -> str: ...


@dataclass(frozen=True)
class TokenSigning:
    """What the controller needs of the server: its signer, and the CA clients trust it by (PEM; b"": none)."""

    signer: LegacyTokenIssuer
    root_ca: bytes = b""


def _is_token_secret(obj: dict[str, Any] | None) -> bool:
    return obj is not None and obj.get("type") == SERVICE_ACCOUNT_TOKEN


def _account_of(secret: dict[str, Any]) -> list[str]:
    name = (object_meta(secret).get("annotations") or {}).get(NAME_KEY)
    return [f"{object_meta(secret).get('namespace') or ''}/{name}"] if _is_token_secret(secret) and name else []


def _data(obj: dict[str, Any], key: str) -> bytes:
    value = (obj.get("data") or {}).get(key)
    try:
        return base64.b64decode(value) if isinstance(value, str) else b""
    except ValueError:
        return b""


class TokensController:
    """Fills and deletes service account token Secrets (see the module doc); reconciles Secret keys."""

    def __init__(self, client: Client, secrets: Informer, accounts: Informer, signing: TokenSigning) -> None:
        self.client = client
        self.secrets = secrets
        self.accounts = accounts
        self.signing = signing
        secrets.add_indexer(_BY_ACCOUNT, _account_of)

    @staticmethod
    def token_secret(event: ObjectEvent) -> bool:
        """Predicate: the event is of a service account token Secret."""
        return _is_token_secret(event.obj)

    def account_secrets(self, account: dict[str, Any]) -> list[ObjectKey]:
        """The token Secrets naming `account` (a ServiceAccount event wakes them)."""
        meta = object_meta(account)
        return self.secrets.index_keys(_BY_ACCOUNT, f"{meta.get('namespace') or ''}/{meta.get('name')}")

    async def reconcile(self, key: ObjectKey) -> None:
        secret = self.secrets.get(key)
        if secret is None or not _is_token_secret(secret):
            return None
        meta = object_meta(secret)
        annotations = meta.get("annotations") or {}
        name = annotations.get(NAME_KEY)
        if not name or meta.get("deletionTimestamp"):
            return None
        account = await self._account(key.namespace, name, annotations.get(UID_KEY) or "")
        if account is None:
            await self._delete(secret)
        else:
            await self._fill(secret, account)
        return None

    async def _account(self, namespace: str, name: str, uid: str) -> dict[str, Any] | None:
        """The ServiceAccount with `uid` (any, when ""): cached, else live; None if there is none."""
        account = self.accounts.get(ObjectKey(namespace, name))
        if account is None:
            try:
                account = await self.client.get(self.accounts.kind, name, namespace=namespace)
            except errors.NotFound:
                return None
        return account if not uid or object_meta(account).get("uid") == uid else None

    async def _delete(self, secret: dict[str, Any]) -> None:
        meta = object_meta(secret)
        try:
            await self.client.delete(self.secrets.kind, meta["name"], namespace=meta.get("namespace") or "",
                                     preconditions={"uid": meta.get("uid") or ""})
        except (errors.NotFound, errors.Conflict):
            pass  # gone already, or another Secret of that name: nothing of this one left to delete

    async def _fill(self, secret: dict[str, Any], account: dict[str, Any]) -> None:
        meta, account_meta = object_meta(secret), object_meta(account)
        namespace, root_ca = meta.get("namespace") or "", self.signing.root_ca
        wanted: dict[str, bytes] = {}
        if root_ca and _data(secret, CA_KEY) != root_ca:
            wanted[CA_KEY] = root_ca
        if not _data(secret, NAMESPACE_KEY):
            wanted[NAMESPACE_KEY] = namespace.encode()
        if not _data(secret, TOKEN_KEY):
            wanted[TOKEN_KEY] = self.signing.signer.issue_legacy(
                namespace, account_meta["name"], account_meta.get("uid") or "", meta["name"]).encode()
        if not wanted:
            return
        rt: ResourceType = self.secrets.kind
        updated = copy.deepcopy(secret)
        updated["apiVersion"], updated["kind"] = rt.api_version, rt.kind
        updated.setdefault("data", {}).update({k: base64.b64encode(v).decode() for k, v in wanted.items()})
        object_meta(updated).setdefault("annotations", {}).update(
            {NAME_KEY: account_meta["name"], UID_KEY: account_meta.get("uid") or ""})
        try:
            await self.client.update(updated)
        except (errors.Conflict, errors.NotFound):
            pass  # changed or gone meanwhile: that change's event brings the key back


def setup(manager: Manager, signing: TokenSigning | None) -> TokensController | None:
    """Add the token controller to `manager`, signing with `signing`; without it (or without Secrets served),
    add nothing and say so, as kube-controller-manager without a private key."""
    scheme = manager.scheme
    secrets_rt = scheme.by_api_version_kind("v1", "Secret")
    accounts_rt = scheme.by_api_version_kind("v1", "ServiceAccount")
    if secrets_rt is None or accounts_rt is None:
        return None
    if signing is None:
        log.info('"%s" is disabled because there is no private key', CONTROLLER_NAME)
        return None
    controller = TokensController(manager.api_reader, manager.informers.informer(secrets_rt),
                                  manager.informers.informer(accounts_rt), signing)
    (manager.controller(CONTROLLER_NAME).for_(secrets_rt, controller.token_secret)
     .watches(accounts_rt, controller.account_secrets, replay=False).complete(controller.reconcile))
    return controller
