"""A CustomResourceDefinition's `spec.conversion`: its defaults and its validation, as apiextensions v1.

- `default_conversion(spec)`: apiextensions v1's SetDefaults: `strategy: None`
  when `conversion` is absent, a `clientConfig.service` without a port gets
  443 (SetDefaults_ServiceReference).
- `conversion_errors(spec, old_spec)`: `validateCustomResourceConversion`.
  The strategy is `None` or `Webhook` (required); `Webhook` needs
  `webhook.clientConfig` with exactly one of `url` and `service`, each as
  apiserver's webhook validation (the webhook configurations' rules:
  `runtime.server.kinds.admissionregistration.clientconfig`), and
  `conversionReviewVersions` (required, DNS-1035
  labels, no duplicates, and, unless the old object already had none it
  recognised, at least one of v1, v1beta1); `None` takes neither.
  The paths are Kubernetes' internal ones, as kube-apiserver reports them
  for a v1 object: `spec.conversion.webhookClientConfig`,
  `spec.conversion.conversionReviewVersions`.
- `webhook_conversion(spec)`: whether the CRD converts through a webhook.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required
from runtime.machinery.validation.names import dns1035_label_errors
from runtime.server.kinds.admissionregistration.clientconfig import client_config_errors, default_client_config

__all__ = ["ACCEPTED_REVIEW_VERSIONS", "default_conversion", "conversion_errors", "webhook_conversion"]

#: The ConversionReview versions kube-apiserver speaks, in its preference order when a CRD lists both.
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")


def webhook_conversion(spec: dict[str, Any]) -> bool:
    """Whether `spec` (a CRD's) converts between its versions with a webhook."""
    return ((spec.get("conversion") or {}).get("strategy")) == "Webhook"


def default_conversion(spec: dict[str, Any]) -> None:
    """apiextensions v1's defaults of `spec.conversion` (changes `spec`)."""
    conversion = spec.get("conversion")
    if conversion is None:
        spec["conversion"] = {"strategy": "None"}
        return
    default_client_config((conversion.get("webhook") or {}).get("clientConfig"))


def conversion_errors(spec: dict[str, Any], old_spec: dict[str, Any] | None = None) -> list[FieldError]:
    """The field errors of `spec.conversion` (see the module doc); `old_spec` on update."""
    conversion = spec.get("conversion")
    if not isinstance(conversion, dict):
        return []
    path = "spec.conversion"
    strategy = conversion.get("strategy") or ""
    errs: list[FieldError] = []
    if not strategy:
        errs.append(required(f"{path}.strategy"))
    elif strategy not in ("None", "Webhook"):
        errs.append(not_supported(f"{path}.strategy", strategy, ["None", "Webhook"]))
    webhook = conversion.get("webhook") if isinstance(conversion.get("webhook"), dict) else None
    client_config = (webhook or {}).get("clientConfig")
    versions = list((webhook or {}).get("conversionReviewVersions") or [])
    if strategy != "Webhook":
        if client_config is not None:
            errs.append(forbidden(f"{path}.webhookClientConfig", "should not be set when strategy is not set to "
                                                                 "Webhook"))
        if versions:
            errs.append(forbidden(f"{path}.conversionReviewVersions", "should not be set when strategy is not set "
                                                                      "to Webhook"))
        return errs
    if not isinstance(client_config, dict):
        errs.append(required(f"{path}.webhookClientConfig", "required when strategy is set to Webhook"))
    else:
        errs += client_config_errors(client_config, f"{path}.webhookClientConfig")
    errs += _review_version_errors(versions, _requires_recognized(old_spec), f"{path}.conversionReviewVersions")
    return errs


def _requires_recognized(old_spec: dict[str, Any] | None) -> bool:
    """On update a recognised review version is required only if the old object had one (or none at all),
    as `hasValidConversionReviewVersionOrEmpty`."""
    if old_spec is None:
        return True
    old = (((old_spec.get("conversion") or {}).get("webhook")) or {}).get("conversionReviewVersions") or []
    return not old or any(v in ACCEPTED_REVIEW_VERSIONS for v in old)


def _review_version_errors(versions: list[Any], require_recognized: bool, path: str) -> list[FieldError]:
    if not versions:
        return [required(path)]
    errs: list[FieldError] = []
    seen: set[Any] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += [invalid(f"{path}[{i}]", version, e) for e in dns1035_label_errors(str(version))]
    if require_recognized and not any(v in ACCEPTED_REVIEW_VERSIONS for v in versions):
        errs.append(invalid(path, versions, "must include at least one of v1, v1beta1"))
    return errs
