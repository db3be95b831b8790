"""A container's environment as Kubernetes validates it (`ValidateEnv`, `validateEnvVarValueFrom`,
`ValidateEnvFrom`).

- `env[i].name` required and an environment variable name (`IsEnvVarName`);
- `env[i].valueFrom`: exactly one of `fieldRef`, `resourceFieldRef`,
  `configMapKeyRef`, `secretKeyRef` (none: `must specify one of: ...`; two:
  `may not have more than one field specified at a time`), and not beside a
  non-empty `value`; a fieldRef's path one of the downward API's; key
  selectors' names DNS subdomains, keys required config keys;
- `envFrom[i]`: a prefix that is a variable name, exactly one of
  `configMapRef` and `secretRef` (errors at `envFrom`, as Kubernetes writes
  them), each with a name that is a DNS subdomain.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid, required
from runtime.server.kinds.configdata import config_key_errors
from runtime.server.kinds.pods.podspec_common import env_var_name, subdomain_errors
from runtime.server.kinds.pods.podspec_volumes import downward_field_ref, resource_field_ref

__all__ = ["validate_env", "validate_env_from", "ENV_FIELD_PATHS"]

#: `validEnvDownwardAPIFieldPathExpressions` (sorted, as the Unsupported value lists them).
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                   "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")


def _key_selector(ref: dict[str, Any], path: str) -> list[FieldError]:
    name = ref.get("name") or ""
    errs = [invalid(f"{path}.name", name, msg) for msg in subdomain_errors(name)]  # an empty name too, as kube
    key = ref.get("key") or ""
    if not key:
        errs.append(required(f"{path}.key"))
    else:
        errs += [invalid(f"{path}.key", key, msg) for msg in config_key_errors(key)]
    return errs


def _value_from(env: dict[str, Any], path: str) -> list[FieldError]:
    source = env.get("valueFrom")
    if source is None:
        return []
    errs: list[FieldError] = []
    count = 0
    if source.get("fieldRef") is not None:
        count += 1
        errs += downward_field_ref(source["fieldRef"], ENV_FIELD_PATHS, f"{path}.fieldRef")
    if source.get("resourceFieldRef") is not None:
        count += 1
        errs += resource_field_ref(source["resourceFieldRef"], f"{path}.resourceFieldRef", volume=False)
    for kind in ("configMapKeyRef", "secretKeyRef"):
        if source.get(kind) is not None:
            count += 1
            errs += _key_selector(source[kind], f"{path}.{kind}")
    if count == 0:
        errs.append(invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                                      "`secretKeyRef`"))
    elif env.get("value"):
        errs.append(invalid(path, "", "may not be specified when `value` is not empty"))
    elif count > 1:
        errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def validate_env(env: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, var in enumerate(env):
        at = f"{path}[{i}]"
        name = var.get("name") or ""
        errs += [required(f"{at}.name")] if not name else env_var_name(name, f"{at}.name")
        errs += _value_from(var, f"{at}.valueFrom")
    return errs


def validate_env_from(sources: list[dict[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, source in enumerate(sources):
        at = f"{path}[{i}]"
        if source.get("prefix"):
            errs += env_var_name(source["prefix"], f"{at}.prefix")
        count = 0
        for kind in ("configMapRef", "secretRef"):
            if (ref := source.get(kind)) is None:
                continue
            count += 1
            name = ref.get("name") or ""
            if not name:
                errs.append(required(f"{at}.{kind}.name"))
            else:
                # NameIsDNSSubdomain with prefix=true masks a trailing '-' (dropping two characters, as Go does)
                masked = name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name
                errs += [invalid(f"{at}.{kind}.name", name, msg) for msg in subdomain_errors(masked)]
        if count == 0:
            errs.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs
