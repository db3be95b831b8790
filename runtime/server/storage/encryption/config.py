"""`EncryptionConfiguration` (apiserver.config.k8s.io/v1): parsed, validated, resolved to storage keys.

`load_config(path, domain)` reads the file (YAML or JSON) and returns an
`EncryptionConfig`; `parse_config(text, domain)` does the same from text. A
config Kubernetes would refuse raises `ConfigError`, one line in kube's words
(`apiserver/pkg/apis/apiserver/validation`: field path, then the complaint;
several complaints as kube's aggregate, `[a, b]`).

Resources are named as in Kubernetes, `resource.group` (`secrets`,
`leases.coordination.k8s.io`, `widgets.example.com`), `*.` (every core
resource), `*.group` (every resource of a group), `*.*` (every resource).
They resolve to storage keys by name alone, so a rule may name a kind that is
not served (yet): a key is `/<group>/<plural>/...` with `core` for the core
group and a built-in group without the API domain (`coordination` for
`coordination.svc.io`); a group in the domain matches both spellings, since a
custom resource's keys keep its whole group. A key's transformer is its
resource's rule, else its group's `*.group`, else `*.*`, else the identity
(which refuses encrypted data), as kube's `transformerFromOverrides`.

Internal to `runtime.server.storage.encryption`: imported by its modules only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import yaml

from runtime.server.storage.encryption.providers import (
    AESCBCTransformer, AESGCMTransformer, IdentityTransformer, PrefixTransformers, SecretboxTransformer,
    Transformer,
)

__all__ = ["ConfigError", "EncryptionConfig", "load_config", "parse_config", "API_VERSION", "KIND"]

API_VERSION = "apiserver.config.k8s.io/v1"
KIND = "EncryptionConfiguration"

#: provider name: (its value prefix, key sizes in bytes, the transformer of one key).
_PROVIDERS: dict[str, tuple[bytes, tuple[int, ...], Callable[[bytes], Transformer]]] = {
    "aesgcm": (b"k8s:enc:aesgcm:v1:", (16, 24, 32), AESGCMTransformer),
    "aescbc": (b"k8s:enc:aescbc:v1:", (32,), AESCBCTransformer),
    "secretbox": (b"k8s:enc:secretbox:v1:", (32,), SecretboxTransformer),
}
#: The providers kube knows that miniplane does not serve (a plug-in service).
_UNSERVED = ("kms",)
#: The no-key-matched error of each provider's key choice (kube's).
_NO_KEY = {"aesgcm": "no matching key was found for the provided AES transformer",
           "aescbc": "no matching key was found for the provided AES transformer",
           "secretbox": "no matching key was found for the provided Secretbox transformer"}
_NO_PREFIX = "no matching prefix found"
_ANY = ("*", "*")


class ConfigError(ValueError):
    """An encryption configuration Kubernetes would refuse; the message is one line."""


@dataclass(frozen=True)
class EncryptionConfig:
    """A validated configuration: each rule's (group, resource) and its transformers, in the file's order.

    `transformer_for(prefix)` is the transformer of a storage prefix
    `/<group>/<plural>/` (see the module doc); `digest` is the file's SHA-256.
    """

    rules: dict[tuple[str, str], PrefixTransformers]
    domain: str
    digest: str = ""
    _identity: PrefixTransformers = field(default_factory=lambda: PrefixTransformers(
        [(b"", IdentityTransformer())], _NO_PREFIX), repr=False)

    def transformer_for(self, prefix: str) -> PrefixTransformers:
        """The transformer of the keys under `/<group>/<plural>/` (the identity when no rule names them)."""
        _, group, plural, _ = prefix.split("/", 3)
        for rule in ((group, plural), (group, "*"), _ANY):
            found = self.rules.get(rule)
            if found is not None:
                return found
        return self._identity

    def encrypts(self, prefix: str) -> bool:
        """Whether values under `prefix` are written encrypted."""
        return self.transformer_for(prefix).write_prefix != b""


def load_config(path: str, domain: str) -> EncryptionConfig:
    """The configuration in the file at `path`. Raises ConfigError (a file that does not read, too)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ConfigError(f"error opening encryption provider configuration file {json.dumps(path)}: "
                          f"{exc.strerror or exc}") from None
    if not data.strip():
        raise ConfigError(f"encryption provider configuration file {json.dumps(path)} is empty")
    return parse_config(data, domain)


def parse_config(data: bytes | str, domain: str) -> EncryptionConfig:
    """The configuration in `data` (YAML or JSON). Raises ConfigError."""
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise ConfigError(f"error converting YAML to JSON: {_yaml_error(exc)}") from None
    if doc is None:
        raise ConfigError("couldn't get version/kind; json parse error: not an object: null")
    if not isinstance(doc, dict):  # Go's words name the JSON type: the value may be a key (a key file given)
        raise ConfigError(f"couldn't get version/kind; json parse error: json: cannot unmarshal {_json_type(doc)} "
                          'into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
                          'Kind string "json:\\"kind,omitempty\\"" }')
    kind, version = doc.get("kind"), doc.get("apiVersion")
    if not kind:
        raise ConfigError("Object 'Kind' is missing")  # kube echoes the document here: keys and all
    if version != API_VERSION or kind != KIND:
        raise ConfigError(f"no kind {json.dumps(kind)} is registered for version {json.dumps(version or '')}")
    errors = _validate(doc)
    if errors:
        raise ConfigError(errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
    digest = hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()
    return _build(doc, domain, digest)


def _json_type(value: Any) -> str:
    """The JSON type Go's decoder names for a document that is not an object."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "array" if isinstance(value, list) else "string"


def _yaml_error(exc: yaml.YAMLError) -> str:
    """Go yaml's `yaml: line N: problem`: PyYAML's own message quotes the line, which may hold a key."""
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    if mark is None or not problem:
        return "yaml: invalid document"
    return f"yaml: line {mark.line + 1}: {problem}"


def _go(value: Any) -> str:
    """A value as kube's field errors print it (%q for strings, Go's %#v of a string list)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(json.dumps(v) for v in value) + "}"
    return json.dumps(value)


def _group_resource(name: str) -> tuple[str, str]:
    """(group, resource) of `resource.group`, as kube's schema.ParseGroupResource."""
    resource, _, group = name.partition(".")
    return group, resource


def _validate(doc: dict[str, Any]) -> list[str]:
    """kube's ValidateEncryptionConfiguration, the providers miniplane serves; each error one string."""
    entries = doc.get("resources")
    if not isinstance(entries, list) or not entries:
        return ["resources: Required value: at least one resources is required"]
    errors: list[str] = []
    for i, entry in enumerate(entries):
        path = f"resources[{i}]"
        if not isinstance(entry, dict):
            errors.append(f"{path}: Invalid value: {_go(entry)}: must be an object")
            continue
        resources = entry.get("resources") or []
        if not isinstance(resources, list) or not all(isinstance(r, str) for r in resources):
            errors.append(f"{path}.resources: Invalid value: {_go(resources)}: must be a list of strings")
            resources = []
        if not resources:
            errors.append(f"{path}.resources: Required value: at least one {path}.resources is required")
        errors += _validate_resources(resources, f"{path}.resources")
        providers = entry.get("providers") or []
        if not isinstance(providers, list) or not providers:
            errors.append(f"{path}.providers: Required value: at least one {path}.providers is required")
            continue
        for j, provider in enumerate(providers):
            errors += _validate_provider(provider, f"{path}.providers[{j}]")
    return errors


def _validate_resources(resources: list[str], path: str) -> list[str]:
    errors: list[str] = []
    duplicate, overlap = _duplicate_and_overlap([_group_resource(r) for r in resources])
    if duplicate:
        errors.append(f"{path}: Invalid value: {_go(resources)}: the same resource cannot be specified multiple times")
    if overlap:
        errors.append(f"{path}: Invalid value: {_go(resources)}: using overlapping resources such as 'secrets' "
                      f"and '*.' in the same resource list is not allowed as they will be masked")
    for k, name in enumerate(resources):
        group, resource = _group_resource(name)
        complaint = (
            "resource name should not contain capital letters" if name.lower() != name else
            "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
            if name == "*" else
            "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in "
            "the config file" if group == "events.k8s.io" else
            "'extensions' group has been removed and cannot be used for encryption" if group == "extensions" else
            "encrypting the same resource across groups is not supported" if group == "*" and resource != "*" else
            "")
        if complaint:
            errors.append(f"{path}[{k}]: Invalid value: {_go(name)}: {complaint}")
    return errors


def _duplicate_and_overlap(parsed: list[tuple[str, str]]) -> tuple[bool, bool]:
    """kube's validateResourceOverlap: a pair named twice, and a pair a wildcard of the list masks (the
    first duplicate pair found counts as a duplicate only, as kube's loop)."""
    duplicate = overlap = False
    for i, a in enumerate(parsed):
        for j, b in enumerate(parsed):
            if i == j:
                continue
            if a == b and not duplicate:
                duplicate = True
                continue
            if a == _ANY or (a[0] == b[0] and "*" in (a[1], b[1])):
                overlap = True
    return duplicate, overlap


def _validate_provider(provider: Any, path: str) -> list[str]:
    named = [name for name in (*_PROVIDERS, "identity", *_UNSERVED) if isinstance(provider, dict) and name in provider]
    # The element's field names only: its values may be keys.
    shown = _go(sorted(provider) if isinstance(provider, dict) else "REDACTED")
    if not named:
        return [f"{path}: Invalid value: {shown}: provider does not contain any of the expected providers: "
                f"KMS, AESGCM, AESCBC, Secretbox, Identity"]
    if len(named) > 1:
        return [f"{path}: Invalid value: {shown}: more than one provider specified in a single element, "
                f"should split into different list elements"]
    name = named[0]
    if name in _UNSERVED:
        return [f"{path}.{name}: Unsupported value: {name}: miniplane serves aesgcm, aescbc, secretbox and identity"]
    if name == "identity":
        return []
    keys = (provider[name] or {}).get("keys") if isinstance(provider[name], dict) else None
    if not keys or not isinstance(keys, list):
        return [f"{path}.{name}.keys: Required value: at least one keys is required"]
    errors: list[str] = []
    sizes = _PROVIDERS[name][1]
    for k, key in enumerate(keys):
        key_path = f"{path}.{name}.keys[{k}]"
        key = key if isinstance(key, dict) else {}
        if not key.get("name"):
            errors.append(f"{key_path}.name: Required value: name is a mandatory field for a key")
        secret = key.get("secret")
        if not secret:
            errors.append(f"{key_path}.secret: Required value: secret is a mandatory field for a key")
            continue
        try:
            raw = base64.b64decode(str(secret), validate=True)
        except (binascii.Error, ValueError):
            errors.append(f'{key_path}.secret: Invalid value: "REDACTED": secrets must be base64 encoded')
            continue
        if len(raw) not in sizes:
            errors.append(f'{key_path}.secret: Invalid value: "REDACTED": secret is not of the expected length, '
                          f'got {len(raw)}, expected one of [{" ".join(map(str, sizes))}]')
    return errors


def _provider(provider: dict[str, Any]) -> tuple[bytes, Transformer]:
    """(prefix, transformer) of one validated provider: its keys chosen by name (`<name>:`)."""
    if "identity" in provider:
        return b"", IdentityTransformer()
    name = next(n for n in _PROVIDERS if n in provider)
    prefix, _, make = _PROVIDERS[name]
    keys = [(f"{key['name']}:".encode(), make(base64.b64decode(str(key["secret"]))))
            for key in provider[name]["keys"]]
    return prefix, PrefixTransformers(keys, _NO_KEY[name])


def _storage_groups(group: str, domain: str) -> tuple[str, ...]:
    """The key segments a rule's group names (see the module doc)."""
    if group == "":
        return ("core",)
    if group == "*":
        return ("*",)
    suffix = "." + domain
    if domain and group.endswith(suffix) and len(group) > len(suffix):
        return (group[:-len(suffix)], group)
    return (group,)


def _build(doc: dict[str, Any], domain: str, digest: str) -> EncryptionConfig:
    """The rules of a validated document; an earlier wildcard masking a later resource is an error (kube's)."""
    rules: dict[tuple[str, str], list[tuple[bytes, Transformer]]] = {}
    for entry in doc["resources"]:
        transformers = [_provider(p) for p in entry["providers"]]
        for name in entry["resources"]:
            group, resource = _group_resource(name)
            for masking in ((group, "*"), _ANY):
                if masking != (group, resource) and masking in _named(rules, domain, masking):
                    raise ConfigError(f"resource {json.dumps(_yaml_name(group, resource))} is masked by earlier "
                                      f"rule {json.dumps(_yaml_name(*masking))}")
            for segment in _storage_groups(group, domain):
                rules.setdefault((segment, resource), []).extend(transformers)
    return EncryptionConfig({rule: PrefixTransformers(entries, _NO_PREFIX) for rule, entries in rules.items()},
                            domain, digest)


def _named(rules: dict[tuple[str, str], Any], domain: str, rule: tuple[str, str]) -> set[tuple[str, str]]:
    """`{rule}` when a rule for it (any spelling of its group) is already in `rules`."""
    return {rule} if any((g, rule[1]) in rules for g in _storage_groups(rule[0], domain)) else set()


def _yaml_name(group: str, resource: str) -> str:
    """How kube names a (group, resource) in the masking error (`*.` for the core group's wildcard)."""
    if group == "" and resource == "*":
        return "*."
    return f"{resource}.{group}" if group else resource
