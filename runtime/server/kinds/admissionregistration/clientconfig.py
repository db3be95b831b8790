"""A webhook's `clientConfig` (Kubernetes' `k8s.io/apiserver/pkg/util/webhook/validation.go`), as the webhook
configurations validate it.

- Exactly one of `url` and `service` ("exactly one of url or service is required").
- `url`: https only, a host, no user information, fragment or query
  ("; desired format: https://host[/path]" after the first two).
- `service`: a name and a namespace; a port 1..65535 (defaulted to 443,
  `SetDefaults_ServiceReference`); a path that starts with `/` and whose
  segments are DNS subdomains ("segment[i] may not be empty", "segment[i]: ...").
  Kubernetes passes the service's name and namespace to `ValidateWebhookService`
  in the opposite order of its parameters, so a missing namespace is reported
  at `service.name` and a missing name at `service.namespace`; so are they here.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, required
from runtime.server.kinds.cluster.volumes import subdomain_errors

__all__ = ["default_client_config", "client_config_errors"]

_FORM = "; desired format: https://host[/path]"


def default_client_config(config: dict[str, Any] | None) -> None:
    """`SetDefaults_ServiceReference`: a service's port is 443."""
    service = (config or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


def _url_errors(url: str, path: str) -> list[FieldError]:
    """`ValidateWebhookURL` with https forced."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - Go's url.Parse refuses a bad port; urlsplit only when asked
    except ValueError:
        port = url.partition("//")[2].partition("/")[0].rpartition("@")[2].rpartition(":")[2]
        problem = f'invalid port ":{port}" after host'
        return [required(path, f'url must be a valid URL: parse "{url}": {problem}{_FORM}')]
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
    """`ValidateWebhookService(fldPath, namespace, name, ...)` as kube calls it: with (name, namespace)."""
    errs: list[FieldError] = []
    if not service.get("namespace"):
        errs.append(required(f"{path}.name"))
    if not service.get("name"):
        errs.append(required(f"{path}.namespace"))
    port = service.get("port")
    if port is not None and not 1 <= port <= 65535:
        errs.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service.get("path")
    if url_path is None or url_path in ("", "/"):
        return errs
    if url_path == "//":
        return errs + [invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
    checked = url_path[1:]
    if checked.endswith("/"):
        checked = checked[:-1]
    for i, step in enumerate(checked.split("/")):
        if not step:
            errs.append(invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [invalid(f"{path}.path", url_path, f"segment[{i}]: {msg}") for msg in subdomain_errors(step)]
    return errs


def client_config_errors(config: dict[str, Any] | None, path: str) -> list[FieldError]:
    """A webhook's clientConfig at `path`."""
    config = config or {}
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [required(path, "exactly one of url or service is required")]
    if url is not None:
        return _url_errors(url, f"{path}.url")
    return _service_errors(service, f"{path}.service")
