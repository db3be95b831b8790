"""Name rules and ObjectMeta validation (apimachinery's `validation.ValidateObjectMeta`).

Label keys and values, annotation keys and finalizer names are checked by
`runtime.machinery.validation.labels`, the one label validator (selectors use it too);
`qualified_name_errors` is its `label_key_errors` under Kubernetes' other
name for the same rule (`IsQualifiedName = IsLabelKey`). Owner references:
`runtime.machinery.validation.ownerrefs`.

Kinds of Kubernetes' own groups that core validation checks
(`pkg/apis/core/validation.ValidateObjectMeta`: core and RBAC kinds, Events)
also refuse a finalizer without a domain (no `/`) unless it is a standard
one (`kubernetes`, `orphan`, `foregroundDeletion`): `kube_finalizers`. Leases,
CRDs and custom resources are checked by apimachinery's rules alone.
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation.gofmt import go_quote
from runtime.machinery.validation.fielderrors import FieldError, forbidden, invalid, required, too_long
from runtime.machinery.validation.labels import label_key_errors, label_value_errors
from runtime.machinery.validation.ownerrefs import owner_reference_errors

__all__ = ["is_dns1123_label", "is_dns1123_subdomain", "is_path_segment_name",
           "path_segment_errors", "dns1123_label_errors", "dns1035_label_errors", "validate_object_meta",
           "qualified_name_errors", "label_value_errors", "validate_object_meta_update", "STANDARD_FINALIZERS",
           "is_standard_or_qualified_finalizer", "finalizer_warnings"]

# Matched with fullmatch: Python's `$` also matches before a trailing newline, Go's does not.
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                     "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                     "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                     "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                         "'-' or '.', and must start and end with an alphanumeric character (e.g. "
                         "'example.com', regex used for validation is "
                         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def is_dns1123_label(value: str) -> bool:
    return len(value) <= 63 and bool(_DNS1123_LABEL.fullmatch(value))


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= 253 and bool(_DNS1123_SUBDOMAIN.fullmatch(value))


def _label_errors(value: str, pattern: re.Pattern[str], message: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not pattern.fullmatch(value):
        out.append(message)
    return out


def dns1123_label_errors(value: str) -> list[str]:
    return _label_errors(value, _DNS1123_LABEL, DNS1123_LABEL_MSG)


def dns1035_label_errors(value: str) -> list[str]:
    """apimachinery's `IsDNS1035Label`: a DNS-1123 label that starts with a letter."""
    return _label_errors(value, _DNS1035_LABEL, _DNS1035_LABEL_MSG)


def path_segment_errors(value: str) -> list[str]:
    """apimachinery's `IsValidPathSegmentName`: RBAC names like `system:basic-user` are fine."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_path_segment_name(value: str) -> bool:
    return not path_segment_errors(value)


qualified_name_errors = label_key_errors

_ANNOTATIONS_MAX = 256 * 1024


def _name_errors(value: str, rule: str, prefix: bool) -> list[str]:
    """A name (or, with `prefix`, a generateName) by `rule`, as apimachinery's name validators.

    A prefix may end with '-' (NameIsDNSLabel/NameIsDNSSubdomain mask it);
    a path-segment prefix is not refused for being '.' or '..'.
    """
    if rule == "path-segment":
        problems = path_segment_errors(value)
        return [p for p in problems if not p.startswith("may not be '")] if prefix else problems
    if prefix and len(value) > 1 and value.endswith("-"):
        value = value[:-2] + "a"  # apimachinery's maskTrailingDash, exactly (it drops two characters)
    if rule == "dns-subdomain":
        return [] if is_dns1123_subdomain(value) else (
            ["must be no more than 253 characters"] if len(value) > 253 else []) + (
            [] if _DNS1123_SUBDOMAIN.fullmatch(value) else [DNS1123_SUBDOMAIN_MSG])
    return dns1035_label_errors(value) if rule == "dns-1035-label" else dns1123_label_errors(value)


def validate_object_meta(meta: dict[str, Any], *, namespaced: bool, name_rule: str,
                         kube_finalizers: bool = False) -> list[FieldError]:
    """apimachinery's ValidateObjectMeta: generateName and name (by `name_rule`: `path-segment`,
    `dns-label`, `dns-subdomain`), namespace scope, generation, labels, annotations, owner
    references, finalizers (paths as Kubernetes writes them: `metadata.finalizers`, no index);
    with `kube_finalizers`, then core validation's standard finalizer names (see the module doc)."""
    errs: list[FieldError] = []
    generate = meta.get("generateName") or ""
    if generate:
        errs.extend(invalid("metadata.generateName", generate, p) for p in _name_errors(generate, name_rule, True))
    name = meta.get("name") or ""
    if not name:
        errs.append(required("metadata.name", "name or generateName is required"))
    else:
        errs.extend(invalid("metadata.name", name, p) for p in _name_errors(name, name_rule, False))
    namespace = meta.get("namespace") or ""
    if namespaced and not namespace:
        errs.append(required("metadata.namespace"))
    elif not namespaced and namespace:
        errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    elif namespace:
        errs.extend(invalid("metadata.namespace", namespace, p) for p in dns1123_label_errors(namespace))
    if (gen := meta.get("generation")) is not None and gen < 0:
        errs.append(invalid("metadata.generation", gen, "must be greater than or equal to 0"))
    for key, value in (meta.get("labels") or {}).items():
        errs.extend(invalid("metadata.labels", key, p) for p in qualified_name_errors(key))
        errs.extend(invalid("metadata.labels", value, p) for p in label_value_errors(value))
    size = 0
    for key, value in (meta.get("annotations") or {}).items():
        errs.extend(invalid("metadata.annotations", key, p) for p in qualified_name_errors(key.lower()))
        size += len(key) + len(value)
    if size > _ANNOTATIONS_MAX:
        errs.append(too_long("metadata.annotations", _ANNOTATIONS_MAX))
    errs.extend(owner_reference_errors(meta.get("ownerReferences") or []))
    finalizers = meta.get("finalizers") or []
    for finalizer in finalizers:
        errs.extend(invalid("metadata.finalizers", finalizer, p) for p in qualified_name_errors(finalizer))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid("metadata.finalizers", finalizers,
                            "finalizer orphan and foregroundDeletion cannot be both set"))
    if kube_finalizers:
        errs.extend(_kube_finalizer_errors(finalizers))
    return errs


#: Core validation's standard finalizer names (`helper.IsStandardFinalizerName`).
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def is_standard_or_qualified_finalizer(name: str) -> bool:
    """Core validation's finalizer rule: a standard name, or a fully qualified one (with a `/`)."""
    return "/" in name or name in STANDARD_FINALIZERS


def _kube_finalizer_errors(finalizers: list[str]) -> list[FieldError]:
    """validateKubeFinalizerName, each at its index (`metadata.finalizers[0]`, unlike the rules above)."""
    return [invalid(f"metadata.finalizers[{i}]", f, "name is neither a standard finalizer name nor is it fully "
                                                    "qualified")
            for i, f in enumerate(finalizers) if not is_standard_or_qualified_finalizer(f)]


def finalizer_warnings(finalizers: list[str], old_finalizers: list[str] | None = None) -> list[str]:
    """The Warnings a custom resource's write earns for each finalizer it adds (apiextensions'
    `generateWarningsFromObj`): in sorted order, a name that is not qualified, or one without a
    path that is not standard, warned about at `metadata.finalizers` instead of refused."""
    out: list[str] = []
    for finalizer in sorted(set(finalizers) - set(old_finalizers or [])):
        shown = go_quote(finalizer)
        out.extend(f"metadata.finalizers: {shown}: {p}" for p in qualified_name_errors(finalizer))
        if not is_standard_or_qualified_finalizer(finalizer):
            out.append(f"metadata.finalizers: {shown}: prefer a domain-qualified finalizer name including a path (/) "
                       "to avoid accidental conflicts with other finalizer writers")
    return out


def validate_object_meta_update(new: dict[str, Any], old: dict[str, Any], *,
                                sent_uid: str | None = None) -> list[FieldError]:
    """What ValidateObjectMetaUpdate adds here: an immutable uid, no new finalizer on an object being deleted.

    `sent_uid` is the uid the request's object carried before the server kept
    the stored one (Kubernetes' BeforeUpdate keeps the old uid only when none
    is given, so another one is `field is immutable`; a changed
    creationTimestamp is silently reset, as there).
    """
    errs: list[FieldError] = []
    if sent_uid and sent_uid != old.get("uid"):
        errs.append(invalid("metadata.uid", sent_uid, "field is immutable"))
    if not old.get("deletionTimestamp"):
        return errs
    extra = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
    if extra:
        listed = ", ".join(go_quote(f) for f in extra)
        errs.append(forbidden("metadata.finalizers", "no new finalizers can be added if the object is being "
                                                     f"deleted, found new finalizers []string{{{listed}}}"))
    return errs
