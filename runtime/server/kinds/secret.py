"""Core `Secret`: credentials as a typed key-value map (Kubernetes' `pkg/registry/core/secret`).

- Decoding: a `null` value in `data` or `stringData` is an empty one (Go's
  decoder); `data` values are base64 (Go's `[]byte`; one that is not is the
  400 Kubernetes' decoder answers, a patch's the patchers' 422); `stringData`
  is merged into `data` (its values win) and dropped, as Kubernetes'
  conversion does, so it is never stored nor returned; `type` defaults to
  `Opaque` (`SetDefaults_Secret`).
- Validation (`ValidateSecret`): names are DNS subdomains; `data` keys are
  config keys, the values total at most 1 MiB; the built-in types' keys:
  `kubernetes.io/service-account-token` needs the
  `kubernetes.io/service-account.name` annotation, `kubernetes.io/dockercfg`
  a `.dockercfg` and `kubernetes.io/dockerconfigjson` a `.dockerconfigjson`
  holding a JSON object, `kubernetes.io/basic-auth` a `username` or a
  `password`, `kubernetes.io/ssh-auth` a non-empty `ssh-privatekey`,
  `kubernetes.io/tls` both `tls.crt` and `tls.key`. Other types, and
  `bootstrap.kubernetes.io/token`, have no rule of the server's (the token
  authenticator and controllers read those).
- Warnings (create and update): a `kubernetes.io/tls` Secret whose key does
  not match its certificate earns Go's `tls.X509KeyPair` error
  (`runtime.server.kinds.tlspair`), as Kubernetes' `warningsForSecret`.
- Update (`ValidateSecretUpdate`; a PUT of a missing Secret is 404): `type` is immutable; once
  `immutable: true`, it cannot be unset and `data` cannot change.
- Fields: `type` besides `metadata.name` and `metadata.namespace`.
- `kubectl get` prints NAME, TYPE, DATA (the number of keys) and AGE.
"""

from __future__ import annotations

import json
from typing import Any

from runtime.machinery.options import Body
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, required, too_long
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.parts import FIELD_LABEL_NOT_SUPPORTED
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column
from runtime.server.kinds.configdata import (
    MAX_SIZE, canonical_base64, config_key_errors, decode_bytes, decoded_size, drop_empty_maps, go_base64,
    immutable_errors, nulls_as_empty,
)
from runtime.server.kinds.subresources import Subresource
from runtime.server.kinds.tlspair import key_pair_problem

__all__ = ["SecretStrategy", "SECRET_TYPE_OPAQUE", "SECRET_TYPE_SERVICE_ACCOUNT_TOKEN", "SERVICE_ACCOUNT_NAME_KEY"]

SECRET_TYPE_OPAQUE = "Opaque"
SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
#: The annotation naming a token Secret's ServiceAccount.
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"

_TYPE_DOC = ("Used to facilitate programmatic handling of secret data. More info: "
             "https://kubernetes.io/docs/concepts/configuration/secret/#secret-types")
_DATA_DOC = ("Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The "
             "serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly "
             "non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4")
#: The types whose data must hold a JSON object, and the key that holds it.
_JSON_KEYS = {"kubernetes.io/dockercfg": ".dockercfg", "kubernetes.io/dockerconfigjson": ".dockerconfigjson"}
_REDACTED = "<secret contents redacted>"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), obj.get("type", ""), len(obj.get("data") or ()), age(meta.get("creationTimestamp"))]


class _NotJSON(ValueError):
    """A constant Python's decoder takes but JSON has not (`NaN`, `Infinity`, `-Infinity`), in Go's words."""

    def __init__(self, name: str) -> None:
        super().__init__("invalid character 'I' in numeric literal" if name.startswith("-")
                         else f"invalid character {name[0]!r} looking for beginning of value")


def _not_json(name: str) -> Any:
    raise _NotJSON(name)


def _json_object_error(value: bytes) -> str | None:
    """Go's `json.Unmarshal(value, &map[string]interface{}{})` error for `value`, None when it decodes.

    Caveat: the words are Go's for the common cases (not JSON; JSON but not an
    object), not every message of Go's scanner.
    """
    try:
        decoded = json.loads(value, parse_constant=_not_json)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(exc.doc.rstrip()):
            return "unexpected end of JSON input"
        return f"invalid character {exc.doc[exc.pos]!r} looking for beginning of value"
    except _NotJSON as exc:
        return str(exc)
    except UnicodeDecodeError:
        return "invalid character looking for beginning of value"
    if decoded is not None and not isinstance(decoded, dict):
        got = {list: "array", str: "string", bool: "bool"}.get(type(decoded), "number")
        return f"json: cannot unmarshal {got} into Go value of type map[string]interface {{}}"
    return None


def _type_errors(obj: dict[str, Any], data: dict[str, str]) -> list[FieldError]:
    """The built-in types' rules over `data` (canonical base64: an empty value is empty bytes)."""
    kind = obj.get("type") or ""
    if kind == SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        if not ((obj["metadata"].get("annotations") or {}).get(SERVICE_ACCOUNT_NAME_KEY)):
            return [required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]")]
    elif kind in _JSON_KEYS:
        key = _JSON_KEYS[kind]
        if key not in data:
            return [required(f"data[{key}]")]
        problem = _json_object_error(go_base64(data[key]))
        if problem is not None:
            return [invalid(f"data[{key}]", _REDACTED, problem)]
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [required("data[username]"), required("data[password]")]
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            return [required("data[ssh-privatekey]")]
    elif kind == "kubernetes.io/tls":
        return [required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
    return []


class SecretStrategy(Strategy):
    """See the module doc."""

    name_rule = "dns-subdomain"
    allow_create_on_update = False  # a PUT of a missing one is 404, as Kubernetes' strategy says
    columns = Columns((NAME_COLUMN, column("Type", _TYPE_DOC), column("Data", _DATA_DOC), AGE_COLUMN), _cells)
    field_labels = ("metadata.name", "metadata.namespace", "type")
    field_label_error = FIELD_LABEL_NOT_SUPPORTED  # AddFieldLabelConversionsForSecret

    def decode(self, body: Body, field_validation: str,
               extra_problems: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
        obj, warnings = super().decode(nulls_as_empty(body, ("data", "stringData")), field_validation,
                                       extra_problems)
        rt = self.rt
        decode_bytes(obj, "data", f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}')
        strings = obj.pop("stringData", None)
        if strings:
            merged = dict(obj.get("data") or {})
            merged.update({key: canonical_base64(value.encode("utf-8")) for key, value in strings.items()})
            obj["data"] = merged
        if not obj.get("type"):
            obj["type"] = SECRET_TYPE_OPAQUE
        return obj, warnings

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        drop_empty_maps(obj, ("data",))

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)
        drop_empty_maps(new, ("data",))

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        errs: list[FieldError] = []
        data = obj.get("data") or {}
        for key in data:
            errs += [invalid(f"data[{key}]", key, msg) for msg in config_key_errors(key)]
        if sum(decoded_size(value) for value in data.values()) > MAX_SIZE:  # canonical base64: decoding checked it
            errs.append(too_long("data", MAX_SIZE))
        return errs + _type_errors(obj, data)

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        errs = []
        if new.get("type") != old.get("type"):
            errs.append(invalid("type", new.get("type", ""), "field is immutable"))
        return errs + immutable_errors(new, old, ("data",)) + self.validate(new)

    def warnings(self, old: dict[str, Any] | None, new: dict[str, Any], manager: str) -> list[str]:
        if new.get("type") != "kubernetes.io/tls":
            return []
        data = new.get("data") or {}
        problem = key_pair_problem(go_base64(data.get("tls.crt", "")), go_base64(data.get("tls.key", "")))
        return [problem] if problem else []

    def selectable_fields(self, obj: dict[str, Any]) -> dict[str, str]:
        fields = super().selectable_fields(obj)
        fields["type"] = obj.get("type", "")
        return fields
