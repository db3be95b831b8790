"""apiextensions/v1 `CustomResourceDefinition`: users bring their own kinds (Kubernetes' apiextensions-apiserver).

- Defaults: `names.singular` is the kind in lower case, `names.listKind` the
  kind + `List`, `conversion.strategy` `None` (a webhook service's port 443); the status starts empty, its
  `storedVersions` the storage version.
- Validation (`apiextensions/validation`): the name is `<plural>.<group>`; the
  group a DNS subdomain with a dot; names DNS-1035 labels (kind and listKind in
  mixed case, not equal); scope `Namespaced` or `Cluster`; versions unique
  DNS-1035 labels, exactly one storage version, at least one served, each with
  a structural schema (`runtime.server.schema.structural_errors`); conversion `None` or `Webhook`
  (`runtime.server.kinds.crdconversion`: its webhook's clientConfig and review versions, as kube's).
  On update group and plural never change, scope and kind not once established.
- Status subresource; the main resource keeps the status.
- Delete: the first delete adds the `customresourcecleanup.apiextensions.k8s.io`
  finalizer and marks the CRD `Terminating`; the CRD controller deletes every
  custom object, then removes the finalizer.
- `observe`: every server serves the kinds of the CRDs its cache holds, once
  they are `Established` (see `runtime.server.kinds.customresource`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from runtime.server.kinds.base import Strategy
from runtime.server.kinds.parts import SchemeObserver
from runtime.server.kinds.subresources import StatusSubresource, Subresource
from runtime.server.kinds.crdconversion import conversion_errors, default_conversion
from runtime.server.kinds.customresource import CustomKinds, schema_errors
from runtime.machinery.crds import CRD_CLEANUP_FINALIZER as CLEANUP_FINALIZER, condition, is_established, set_condition
from runtime.machinery.options import ParsedDeleteOptions
from runtime.machinery.validation import FieldError, is_dns1123_subdomain
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required
from runtime.machinery.validation.names import DNS1123_SUBDOMAIN_MSG

__all__ = ["CustomResourceDefinitionStrategy", "CLEANUP_FINALIZER", "condition", "is_established"]


_DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
            "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
            "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def _dns1035_errors(value: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    ok = bool(value) and value[0].isascii() and value[0].islower() and value[0].isalpha() \
        and all(c.isascii() and (c.islower() or c.isdigit() or c == "-") for c in value) and value[-1] != "-"
    if not ok:
        out.append(_DNS1035)
    return out


def storage_version(spec: dict[str, Any]) -> str:
    return next((v.get("name", "") for v in spec.get("versions") or [] if v.get("storage")), "")


class CustomResourceDefinitionStrategy(Strategy, SchemeObserver):
    """See the module doc."""

    subresources = {"status": StatusSubresource()}
    counts_generation = True  # spec changes, as Kubernetes' CRD strategy
    name_rule = "dns-subdomain"
    kube_finalizers = False  # apiextensions validates ObjectMeta with apimachinery's rules
    field_labels = ("metadata.name",)

    def __init__(self, scheme: Any, rt: Any) -> None:
        super().__init__(scheme, rt)
        #: The custom kinds this scheme serves, following the CRDs the cache holds.
        self.custom = CustomKinds(scheme)

    # ---- writes ------------------------------------------------------------------------------------

    def prepare_for_create(self, obj: dict[str, Any]) -> None:
        super().prepare_for_create(obj)
        _default(obj.setdefault("spec", {}))
        stored = storage_version(obj["spec"])
        obj["status"] = {"storedVersions": [stored]} if stored else {}

    def prepare_for_update(self, new: dict[str, Any], old: dict[str, Any],
                           subresource: Subresource | None = None) -> None:
        super().prepare_for_update(new, old, subresource)
        _default(new.setdefault("spec", {}))
        if not isinstance(subresource, StatusSubresource):
            stored = list((old.get("status") or {}).get("storedVersions") or [])
            version = storage_version(new["spec"])
            if version and version not in stored:
                new.setdefault("status", {})["storedVersions"] = [*stored, version]

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.get("spec") or {}
        names = spec.get("names") or {}
        errs: list[FieldError] = []
        wanted = f"{names.get('plural', '')}.{spec.get('group', '')}"
        if (obj["metadata"].get("name") or "") != wanted:
            errs.append(invalid("metadata.name", obj["metadata"].get("name", ""),
                                'must be spec.names.plural+"."+spec.group'))
        group = spec.get("group") or ""
        if not group:
            errs.append(required("spec.group"))
        elif not is_dns1123_subdomain(group):
            errs.append(invalid("spec.group", group, DNS1123_SUBDOMAIN_MSG))
        elif "." not in group:
            errs.append(invalid("spec.group", group, "should be a domain with at least one dot"))
        scope = spec.get("scope") or ""
        if not scope:
            errs.append(required("spec.scope"))
        elif scope not in ("Cluster", "Namespaced"):
            errs.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
        errs += _version_errors(spec)
        for field in ("plural", "singular", "kind", "listKind"):
            if not names.get(field):
                errs.append(required(f"spec.names.{field}"))
        errs += _names_errors(names, "spec.names")
        errs += conversion_errors(spec)
        if spec.get("preserveUnknownFields"):
            errs.append(invalid("spec.preserveUnknownFields", True, "must be false in order to use defaults in "
                                "the schema"))
        return errs

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        # The conversion rules on update: a CRD that already named only review versions the server does
        # not speak keeps them (validateCustomResourceConversion's requireRecognizedVersion).
        created = conversion_errors(new.get("spec") or {})
        errs = [e for e in self.validate(new) if e not in created]
        errs += conversion_errors(new.get("spec") or {}, old.get("spec") or {})
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        immutable = [("spec.group", spec.get("group"), old_spec.get("group")),
                     ("spec.names.plural", (spec.get("names") or {}).get("plural"),
                      (old_spec.get("names") or {}).get("plural"))]
        if is_established(old):
            immutable += [("spec.scope", spec.get("scope"), old_spec.get("scope")),
                          ("spec.names.kind", (spec.get("names") or {}).get("kind"),
                           (old_spec.get("names") or {}).get("kind"))]
        errs += [invalid(path, value, "field is immutable") for path, value, was in immutable if value != was]
        versions = {v.get("name") for v in spec.get("versions") or []}
        for i, stored in enumerate((new.get("status") or {}).get("storedVersions") or []):
            if stored not in versions:
                errs.append(invalid(f"status.storedVersions[{i}]", stored, "must appear in spec.versions"))
        return errs

    # ---- deletion ----------------------------------------------------------------------------------

    def deletion_finalizers(self, finalizers: list[str], options: ParsedDeleteOptions) -> list[str]:
        result = super().deletion_finalizers(finalizers, options)
        return result if CLEANUP_FINALIZER in result else [*result, CLEANUP_FINALIZER]

    def prepare_for_delete(self, obj: dict[str, Any]) -> None:
        super().prepare_for_delete(obj)
        set_condition(obj, "Terminating", "True", "InstanceDeletionPending",
                      "CustomResourceDefinition marked for deletion; instance deletion pending")

    # ---- what every server does with the CRDs it sees ----------------------------------------------

    def observe(self, event_type: str, obj: dict[str, Any]) -> None:
        """Serve (or stop serving) the kinds of `obj` as the cache sees it change."""
        if event_type == "DELETED":
            self.custom.forget(obj["metadata"]["name"])
        else:
            self.custom.follow(obj)

    def observe_list(self, objs: list[dict[str, Any]]) -> None:
        self.custom.retain({o["metadata"]["name"] for o in objs})
        super().observe_list(objs)


def _default(spec: dict[str, Any]) -> None:
    """apiextensions' SetDefaults: singular and listKind from the kind, conversion None."""
    names = spec.get("names")
    if isinstance(names, dict) and names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    if spec.get("versions") is not None:
        default_conversion(spec)


def _names_errors(names: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for field in ("plural", "singular"):
        value = names.get(field) or ""
        if value:
            errs += [invalid(f"{path}.{field}", value, e) for e in _dns1035_errors(value)]
    for field in ("kind", "listKind"):
        value = names.get(field) or ""
        if value and _dns1035_errors(value.lower()):
            errs.append(invalid(f"{path}.{field}", value, "may have mixed case, but should otherwise match: "
                                + ",".join(_dns1035_errors(value.lower()))))
    for i, short in enumerate(names.get("shortNames") or []):
        errs += [invalid(f"{path}.shortNames[{i}]", short, e) for e in _dns1035_errors(short)]
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(invalid(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same"))
    for i, category in enumerate(names.get("categories") or []):
        errs += [invalid(f"{path}.categories[{i}]", category, e) for e in _dns1035_errors(category)]
    return errs


def _version_errors(spec: dict[str, Any]) -> list[FieldError]:
    versions = spec.get("versions") or []
    errs: list[FieldError] = []
    if not versions:
        return [required("spec.versions")]
    names = [v.get("name") or "" for v in versions]
    for i, version in enumerate(versions):
        at = f"spec.versions[{i}]"
        errs += [invalid(f"{at}.name", names[i], e) for e in _dns1035_errors(names[i])]
        errs += _schema_errors(version, at)
        for j, col in enumerate(version.get("additionalPrinterColumns") or []):
            if not col.get("name"):
                errs.append(required(f"{at}.additionalPrinterColumns[{j}].name"))
            if not col.get("jsonPath"):
                errs.append(required(f"{at}.additionalPrinterColumns[{j}].jsonPath"))
            if col.get("type") not in ("integer", "number", "string", "boolean", "date"):
                errs.append(not_supported(f"{at}.additionalPrinterColumns[{j}].type", col.get("type") or "",
                                          ["boolean", "date", "integer", "number", "string"]))
    versions_json = json.loads(json.dumps(versions))
    if len(set(names)) != len(names):
        errs.append(invalid("spec.versions", versions_json, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage")) != 1:
        errs.append(invalid("spec.versions", versions_json, "must have exactly one version marked as storage version"))
    if not any(v.get("served") for v in versions):
        errs.append(invalid("spec.versions", versions_json, "must have at least one version marked as served"))
    return errs


def _schema_errors(version: dict[str, Any], at: str) -> list[FieldError]:
    """The structural-schema rules of one version's schema (required in apiextensions/v1)."""
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    if schema is None:
        return [required(f"{at}.schema.openAPIV3Schema", "schemas are required")]
    status = ((version.get("subresources") or {}).get("status")) is not None
    errs = schema_errors(copy.deepcopy(schema), f"{at}.schema.openAPIV3Schema")
    if status and set(schema) - {"type", "properties", "required", "description", "x-kubernetes-validations"}:
        errs.append(forbidden(f"{at}.schema.openAPIV3Schema",
                              'must only have "properties", "required" or "description" at the root if the status '
                              "subresource is enabled"))
    return errs
