"""`admissionregistration/v1` `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` (Kubernetes'
`pkg/registry/admissionregistration/{validating,mutating}webhookconfiguration`), cluster-scoped.

- Defaults (`SetDefaults_ValidatingWebhook`, `..MutatingWebhook`): failurePolicy
  Fail, matchPolicy Equivalent, namespaceSelector and objectSelector `{}`,
  timeoutSeconds 10; a mutating webhook's reinvocationPolicy Never; rules'
  scope `*`; a service's port 443. sideEffects and admissionReviewVersions
  are not defaulted in v1: both are required.
- Validation (`ValidateValidatingWebhookConfiguration`, `..Mutating..`): the
  name is a DNS subdomain; each webhook's name a fully qualified name (three
  segments at least), unique ("Duplicate value"); its rules
  (`rules.rule_with_operations_errors`), failurePolicy, matchPolicy,
  sideEffects required and None or NoneOnDryRun, timeoutSeconds 1..30,
  selectors, reinvocationPolicy Never or IfNeeded, clientConfig
  (`clientconfig`), matchConditions (`rules.match_conditions_errors`);
  admissionReviewVersions required, unique, DNS-1035 labels, one of v1 and
  v1beta1 at least.
- Update (`Validate...Update`): the create rules, relaxed where the stored
  object already broke them (kube's ratcheting options): sideEffects Unknown and
  Some stay allowed if an old webhook had them, unrecognized review versions if
  an old webhook had only such, duplicate names if the old ones were, and
  unchanged matchConditions are not compiled again.
- Generation 1 on create, counted on changes of `webhooks`; a PUT of a missing
  configuration is 404.
- `kubectl get`: NAME WEBHOOKS AGE.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError, label_selector_errors, validate_object_meta
from runtime.machinery.validation.fielderrors import duplicate, invalid, not_supported, required
from runtime.machinery.validation.names import dns1035_label_errors
from runtime.server.kinds.admissionregistration.clientconfig import client_config_errors, default_client_config
from runtime.server.kinds.admissionregistration.rules import (
    MATCH_POLICIES, default_rule, failure_policy_errors, fully_qualified_name_errors,
    match_conditions_errors, rule_with_operations_errors,
)
from runtime.server.kinds.base import Strategy
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column

__all__ = ["ValidatingWebhookConfigurationStrategy", "MutatingWebhookConfigurationStrategy",
           "ACCEPTED_REVIEW_VERSIONS", "NO_SIDE_EFFECTS"]

#: The AdmissionReview versions the server sends (`AcceptedAdmissionReviewVersions`), in preference order.
ACCEPTED_REVIEW_VERSIONS = ["v1", "v1beta1"]
#: The side-effect classes a new webhook may declare (`noSideEffectClasses`), sorted.
NO_SIDE_EFFECTS = ["None", "NoneOnDryRun"]
_SIDE_EFFECTS = ["None", "NoneOnDryRun", "Some", "Unknown"]
_REINVOCATION_POLICIES = ["IfNeeded", "Never"]


class _Options:
    """kube's `validationOptions`: what an update relaxes because the stored object had it."""

    def __init__(self, old: list[dict[str, Any]] | None = None, new: list[dict[str, Any]] | None = None) -> None:
        self.require_no_side_effects = old is None or all(h.get("sideEffects") in NO_SIDE_EFFECTS for h in old)
        self.require_recognized_versions = old is None or all(
            not h.get("admissionReviewVersions") or any(
                v in ACCEPTED_REVIEW_VERSIONS for v in h["admissionReviewVersions"]) for h in old)
        names = [h.get("name") for h in old or []]
        self.require_unique_names = len(names) == len(set(names))
        self.ignore_match_conditions = old is not None and new is not None and len(old) == len(new) and all(
            (a.get("matchConditions") or []) == (b.get("matchConditions") or []) for a, b in zip(new, old))


def _review_versions_errors(versions: list[str], require_recognized: bool, path: str) -> list[FieldError]:
    """`validateAdmissionReviewVersions`."""
    if not versions:
        return [required(path, "must specify one of " + ", ".join(ACCEPTED_REVIEW_VERSIONS))]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += [invalid(f"{path}[{i}]", version, msg) for msg in dns1035_label_errors(version)]
    if require_recognized and not seen & set(ACCEPTED_REVIEW_VERSIONS):
        errs.append(invalid(path, versions, "must include at least one of " + ", ".join(ACCEPTED_REVIEW_VERSIONS)))
    return errs


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta = obj["metadata"]
    return [meta.get("name", ""), len(obj.get("webhooks") or []), age(meta.get("creationTimestamp"))]


_COLUMNS = Columns((
    NAME_COLUMN,
    column("Webhooks", "Webhooks indicates the number of webhooks registered in this configuration",
           type_="integer"),
    AGE_COLUMN,
), _cells)


class _WebhookConfigurationStrategy(Strategy):
    """What both configurations share (see the module doc)."""

    name_rule = "dns-subdomain"
    kube_finalizers = False
    allow_create_on_update = False
    counts_generation = True
    columns = _COLUMNS
    #: A mutating webhook's own default and rule.
    mutating = False

    def default(self, obj: dict[str, Any]) -> None:
        for hook in obj.get("webhooks") or []:
            for key, value in (("failurePolicy", "Fail"), ("matchPolicy", "Equivalent"), ("timeoutSeconds", 10)):
                if hook.get(key) is None:
                    hook[key] = value
            for selector in ("namespaceSelector", "objectSelector"):
                if hook.get(selector) is None:
                    hook[selector] = {}
            if self.mutating and hook.get("reinvocationPolicy") is None:
                hook["reinvocationPolicy"] = "Never"
            default_client_config(hook.get("clientConfig"))
            for rule in hook.get("rules") or []:
                default_rule(rule)

    def validate_spec(self, obj: dict[str, Any]) -> list[FieldError]:
        return self._webhooks_errors(obj.get("webhooks") or [], _Options())

    def validate_update(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        hooks = new.get("webhooks") or []
        errs = validate_object_meta(new.get("metadata") or {}, namespaced=False, name_rule=self.name_rule)
        return errs + self._webhooks_errors(hooks, _Options(old.get("webhooks") or [], hooks))

    def _webhooks_errors(self, hooks: list[dict[str, Any]], options: _Options) -> list[FieldError]:
        errs: list[FieldError] = []
        names: set[str] = set()
        for i, hook in enumerate(hooks):
            at = f"webhooks[{i}]"
            errs += self._webhook_errors(hook, options, at)
            errs += _review_versions_errors(hook.get("admissionReviewVersions") or [],
                                            options.require_recognized_versions, f"{at}.admissionReviewVersions")
            name = hook.get("name") or ""
            if options.require_unique_names and name:
                if name in names:
                    errs.append(duplicate(f"{at}.name", name))
                names.add(name)
        return errs

    def _webhook_errors(self, hook: dict[str, Any], options: _Options, path: str) -> list[FieldError]:
        """`validateValidatingWebhook` / `validateMutatingWebhook`."""
        errs = fully_qualified_name_errors(hook.get("name") or "", f"{path}.name")
        for i, rule in enumerate(hook.get("rules") or []):
            errs += rule_with_operations_errors(rule, f"{path}.rules[{i}]")
        errs += failure_policy_errors(hook.get("failurePolicy"), f"{path}.failurePolicy", required_=False)
        policy = hook.get("matchPolicy")
        if policy is not None and policy not in MATCH_POLICIES:
            errs.append(not_supported(f"{path}.matchPolicy", policy, MATCH_POLICIES))
        allowed = NO_SIDE_EFFECTS if options.require_no_side_effects else _SIDE_EFFECTS
        side_effects = hook.get("sideEffects")
        if side_effects is None:
            errs.append(required(f"{path}.sideEffects", "must specify one of " + ", ".join(allowed)))
        elif side_effects not in allowed:
            errs.append(not_supported(f"{path}.sideEffects", side_effects, allowed))
        timeout = hook.get("timeoutSeconds")
        if timeout is not None and not 1 <= timeout <= 30:
            errs.append(invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 "
                                                                   "seconds"))
        for selector in ("namespaceSelector", "objectSelector"):
            if hook.get(selector) is not None:
                errs += label_selector_errors(hook[selector], f"{path}.{selector}")
        reinvocation = hook.get("reinvocationPolicy")
        if self.mutating and reinvocation is not None and reinvocation not in _REINVOCATION_POLICIES:
            errs.append(not_supported(f"{path}.reinvocationPolicy", reinvocation, _REINVOCATION_POLICIES))
        errs += client_config_errors(hook.get("clientConfig"), f"{path}.clientConfig")
        if not options.ignore_match_conditions:
            errs += match_conditions_errors(hook.get("matchConditions") or [], f"{path}.matchConditions")
        return errs


class ValidatingWebhookConfigurationStrategy(_WebhookConfigurationStrategy):
    """See the module doc."""


class MutatingWebhookConfigurationStrategy(_WebhookConfigurationStrategy):
    """See the module doc: a mutating webhook also has a reinvocationPolicy."""

    mutating = True
