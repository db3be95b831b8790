"""A CustomResourceDefinition's `spec.conversion`: its defaults and its validation, as apiextensions v1.

- `default_conversion(spec)`: apiextensions v1's SetDefaults: `strategy: None`
  when `conversion` is absent, a `clientConfig.service` without a port gets
  443 (SetDefaults_ServiceReference).
- `conversion_errors(spec, old_spec)`: `validateCustomResourceConversion`.
  The strategy is `None` or `Webhook` (required); `Webhook` needs
  `webhook.clientConfig` with exactly one of `url` (https, a host, no user,
  query or fragment: apiserver's `ValidateWebhookURL`) or `service` (name,
  namespace, port 1-65535, a path of DNS-1123 segments:
  `ValidateWebhookService`), and `conversionReviewVersions` (required, DNS-1035
  labels, no duplicates, and, unless the old object already had none it
  recognised, at least one of v1, v1beta1); `None` takes neither.
  The paths are Kubernetes' internal ones, as kube-apiserver reports them
  for a v1 object: `spec.conversion.webhookClientConfig`,
  `spec.conversion.conversionReviewVersions`. A missing service name or
  namespace is reported at the other's path, as Kubernetes does (its
  caller passes name and namespace in the order opposite to the
  function's parameters).
- `webhook_conversion(spec)`: whether the CRD converts through a webhook.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required
from runtime.machinery.validation.names import DNS1123_SUBDOMAIN_MSG, dns1035_label_errors, is_dns1123_subdomain

__all__ = ["ACCEPTED_REVIEW_VERSIONS", "default_conversion", "conversion_errors", "webhook_conversion"]

#: The ConversionReview versions kube-apiserver speaks, in its preference order when a CRD lists both.
ACCEPTED_REVIEW_VERSIONS = ("v1", "v1beta1")
_FORM = "; desired format: https://host[/path]"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def webhook_conversion(spec: dict[str, Any]) -> bool:
    """Whether `spec` (a CRD's) converts between its versions with a webhook."""
    return ((spec.get("conversion") or {}).get("strategy")) == "Webhook"


def default_conversion(spec: dict[str, Any]) -> None:
    """apiextensions v1's defaults of `spec.conversion` (changes `spec`)."""
    conversion = spec.get("conversion")
    if conversion is None:
        spec["conversion"] = {"strategy": "None"}
        return
    service = (((conversion.get("webhook") or {}).get("clientConfig")) or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


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


def client_config_errors(cc: dict[str, Any], path: str) -> list[FieldError]:
    """A webhook clientConfig: exactly one of url and service, each valid (apiserver's webhook validation)."""
    url, service = cc.get("url"), cc.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return _url_errors(str(url), f"{path}.url")
    return _service_errors(service if isinstance(service, dict) else {}, f"{path}.service")


def _url_errors(url: str, path: str) -> list[FieldError]:
    """apiserver's ValidateWebhookURL with https forced."""
    if _CONTROL.search(url):
        return [required(path, f'url must be a valid URL: parse "{url}": net/url: invalid control character in '
                               f"URL{_FORM}")]
    if url.startswith(":"):
        return [required(path, f'url must be a valid URL: parse "{url}": missing protocol scheme{_FORM}')]
    parts = urlsplit(url)
    errs: list[FieldError] = []
    if parts.scheme != "https":
        errs.append(invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _FORM))
    host = parts.netloc.rpartition("@")[2]
    if not host:
        errs.append(invalid(path, host, "host must be specified" + _FORM))
    if "@" in parts.netloc:
        errs.append(invalid(path, parts.netloc.rpartition("@")[0], "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def _service_errors(service: dict[str, Any], path: str) -> list[FieldError]:
    """apiserver's ValidateWebhookService, called as apiextensions calls it (name and namespace swapped)."""
    errs: list[FieldError] = []
    # Kubernetes passes (name, namespace) to a function declared (namespace, name): each is reported
    # at the other's path.
    if not service.get("namespace"):
        errs.append(required(f"{path}.name"))
    if not service.get("name"):
        errs.append(required(f"{path}.namespace"))
    port = service.get("port", 443)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        errs.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if url_path is None or url_path in ("", "/"):
        return errs
    if url_path == "//":
        return [*errs, invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
    rest = url_path[1:]
    if rest.endswith("/"):
        rest = rest[:-1]
    for i, step in enumerate(rest.split("/")):
        if not step:
            errs.append(invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        failures = (["must be no more than 253 characters"] if len(step) > 253 else []) + (
            [] if is_dns1123_subdomain(step) or len(step) > 253 else [DNS1123_SUBDOMAIN_MSG])
        errs += [invalid(f"{path}.path", url_path, f"segment[{i}]: {failure}") for failure in failures]
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
