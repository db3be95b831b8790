"""The rules every admissionregistration kind shares (Kubernetes' `pkg/apis/admissionregistration/validation`
and `v1/defaults.go`): resource rules, match resources, match conditions, param kinds, CEL expressions.

- Defaults: a rule's `scope` is `*` (`SetDefaults_Rule`); match resources'
  `matchPolicy` is Equivalent, their selectors `{}` (`SetDefaults_MatchResources`).
- `rule_with_operations_errors` (`validateRuleWithOperations`): operations
  required, one of `*`/CREATE/UPDATE/DELETE/CONNECT (`*` alone); apiGroups and
  apiVersions required (`*` alone, no empty version); resources required, a
  `*/*` alone, `*` without plain resources, `x/*` and `*/x` covering others;
  scope `*`, Cluster or Namespaced. `named_rule_errors` adds resourceNames
  (path segments, unique).
- `match_resources_errors` (`validateMatchResources`): matchPolicy and both
  selectors required (defaults fill them), selectors strict.
- `match_conditions_errors` (`validateMatchConditions`): at most 64, names
  unique qualified names, expressions required and compiling as CEL.
- `param_kind_errors`, `cel_errors`, `qualified_name_errors_at`,
  `fully_qualified_name_errors` (`IsFullyQualifiedName`: webhook names).
- A policy's: `match_constraints_errors` (required, one resource rule at
  least), `variables_errors` (`validateVariable`: CEL identifiers, compiling
  expressions), `param_kind_text` (its PARAMKIND column).

Bad values that Go prints as `%#v` of a typed slice are shown so (`go_slice`).
"""

from __future__ import annotations

import re
from typing import Any

from runtime.machinery.validation import FieldError, label_selector_errors
from runtime.machinery.validation.fielderrors import duplicate, invalid, not_supported, required, too_many
from runtime.machinery.validation.gofmt import GoText, go_quote
from runtime.machinery.validation.names import dns1035_label_errors, path_segment_errors, qualified_name_errors
from runtime.server.kinds.cluster.volumes import subdomain_errors
from runtime.server.schema.cel.program import CELCompileError, compile_expression

__all__ = ["FAILURE_POLICIES", "MATCH_POLICIES", "OPERATIONS", "MUTATING_OPERATIONS", "go_slice", "default_rule",
           "default_match_resources", "rule_with_operations_errors", "named_rule_errors", "match_resources_errors",
           "operations_errors", "match_conditions_errors", "param_kind_errors", "cel_errors",
           "qualified_name_errors_at", "fully_qualified_name_errors", "failure_policy_errors", "variables_errors",
           "match_constraints_errors", "param_kind_text"]

# Each as Go's `sets.List()` gives it: sorted.
FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
#: A MutatingAdmissionPolicy cannot mutate a DELETE.
MUTATING_OPERATIONS = ["*", "CONNECT", "CREATE", "UPDATE"]
_SCOPES = ["*", "Cluster", "Namespaced"]
_MAX_MATCH_CONDITIONS = 64


def go_slice(type_name: str, items: list[Any]) -> GoText:
    """Go's `%#v` of a slice of a named string type: `[]admissionregistration.OperationType{"*", "CREATE"}`."""
    return GoText(f"[]{type_name}{{" + ", ".join(go_quote(str(i)) for i in items) + "}")


def default_rule(rule: dict[str, Any]) -> None:
    """`SetDefaults_Rule`."""
    if rule.get("scope") is None:
        rule["scope"] = "*"


def default_match_resources(resources: dict[str, Any]) -> None:
    """`SetDefaults_MatchResources`, and `SetDefaults_Rule` of its rules (the generated object defaults)."""
    if resources.get("matchPolicy") is None:
        resources["matchPolicy"] = "Equivalent"
    for selector in ("namespaceSelector", "objectSelector"):
        if resources.get(selector) is None:
            resources[selector] = {}
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in resources.get(key) or []:
            default_rule(rule)


def fully_qualified_name_errors(name: str, path: str) -> list[FieldError]:
    """apimachinery's `IsFullyQualifiedName`: a DNS subdomain of at least three segments."""
    if not name:
        return [required(path)]
    problems = subdomain_errors(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def qualified_name_errors_at(name: str, path: str) -> list[FieldError]:
    """core validation's `ValidateQualifiedName`: one Invalid per problem."""
    return [invalid(path, name, msg) for msg in qualified_name_errors(name)]


def failure_policy_errors(policy: Any, path: str, *, required_: bool) -> list[FieldError]:
    """A failurePolicy Fail or Ignore; a policy's is required (defaulted), a webhook's optional."""
    if policy is None:
        return [required(path)] if required_ else []
    return [] if policy in FAILURE_POLICIES else [not_supported(path, policy, FAILURE_POLICIES)]


def _resources_errors(resources: list[str], path: str) -> list[FieldError]:
    """`validateResources`: sub-resource forms and wildcards."""
    errs = [required(path)] if not resources else []
    with_wildcard_sub: set[str] = set()  # x/*
    with_wildcard_res: set[str] = set()  # */x
    double = single = plain = False
    for i, res_sub in enumerate(resources):
        if res_sub == "":
            errs.append(required(f"{path}[{i}]"))
            continue
        double = double or res_sub == "*/*"
        single = single or res_sub == "*"
        res, sep, sub = res_sub.partition("/")
        if not sep:
            plain = res_sub != "*"  # as kube's: the last plain entry decides
            continue
        if res in with_wildcard_sub:
            errs.append(invalid(f"{path}[{i}]", res_sub, f"if '{res}/*' is present, must not specify {res_sub}"))
        if sub in with_wildcard_res:
            errs.append(invalid(f"{path}[{i}]", res_sub, f"if '*/{sub}' is present, must not specify {res_sub}"))
        if sub == "*":
            with_wildcard_sub.add(res)
        if res == "*":
            with_wildcard_res.add(sub)
    if len(resources) > 1 and double:
        errs.append(invalid(path, resources, "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(invalid(path, resources, "if '*' is present, must not specify other resources without "
                                             "subresources"))
    return errs


def _rule_errors(rule: dict[str, Any], path: str) -> list[FieldError]:
    """`validateRule` (sub-resources allowed)."""
    errs: list[FieldError] = []
    groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
    if not groups:
        errs.append(required(f"{path}.apiGroups"))
    if len(groups) > 1 and "*" in groups:
        errs.append(invalid(f"{path}.apiGroups", groups, "if '*' is present, must not specify other API groups"))
    if not versions:
        errs.append(required(f"{path}.apiVersions"))
    if len(versions) > 1 and "*" in versions:
        errs.append(invalid(f"{path}.apiVersions", versions,
                            "if '*' is present, must not specify other API versions"))
    errs += [required(f"{path}.apiVersions[{i}]") for i, v in enumerate(versions) if v == ""]
    errs += _resources_errors(rule.get("resources") or [], f"{path}.resources")
    scope = rule.get("scope")
    if scope is not None and scope not in _SCOPES:
        errs.append(not_supported(f"{path}.scope", scope, _SCOPES))
    return errs


def rule_with_operations_errors(rule: dict[str, Any], path: str) -> list[FieldError]:
    """`validateRuleWithOperations`."""
    operations = rule.get("operations") or []
    errs = [required(f"{path}.operations")] if not operations else []
    if len(operations) > 1 and "*" in operations:
        errs.append(invalid(f"{path}.operations", go_slice("admissionregistration.OperationType", operations),
                            "if '*' is present, must not specify other operations"))
    errs += [not_supported(f"{path}.operations[{i}]", op, OPERATIONS)
             for i, op in enumerate(operations) if op not in OPERATIONS]
    return errs + _rule_errors(rule, path)


def named_rule_errors(rule: dict[str, Any], path: str) -> list[FieldError]:
    """`validateNamedRuleWithOperations`: resourceNames, then the rule."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, name in enumerate(rule.get("resourceNames") or []):
        errs += [invalid(f"{path}.resourceNames[{i}]", name, msg) for msg in path_segment_errors(name)]
        if name in seen:
            errs.append(duplicate(f"{path}.resourceNames[{i}]", name))
        seen.add(name)
    return errs + rule_with_operations_errors(rule, path)


def match_resources_errors(resources: dict[str, Any] | None, path: str) -> list[FieldError]:
    """`validateMatchResources` (nothing for an absent one)."""
    if resources is None:
        return []
    errs: list[FieldError] = []
    policy = resources.get("matchPolicy")
    if policy is None:
        errs.append(required(f"{path}.matchPolicy"))
    elif policy not in MATCH_POLICIES:
        errs.append(not_supported(f"{path}.matchPolicy", policy, MATCH_POLICIES))
    for selector in ("namespaceSelector", "objectSelector"):
        if resources.get(selector) is None:
            errs.append(required(f"{path}.{selector}"))
        else:
            errs += label_selector_errors(resources[selector], f"{path}.{selector}")
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(resources.get(key) or []):
            errs += named_rule_errors(rule, f"{path}.{key}[{i}]")
    return errs


def operations_errors(resources: dict[str, Any], path: str) -> list[FieldError]:
    """A mutating policy's or binding's resource rules mutate only what can be (no DELETE). The path has no
    index, as kube's."""
    return [not_supported(path, op, MUTATING_OPERATIONS) for rule in resources.get("resourceRules") or []
            for op in rule.get("operations") or [] if op not in MUTATING_OPERATIONS]


def cel_errors(expression: str, path: str) -> list[FieldError]:
    """A CEL expression that does not compile: Invalid with the compiler's words."""
    try:
        compile_expression(expression)
    except CELCompileError as exc:
        return [invalid(path, expression, f"compilation failed: {exc}")]
    return []


def match_conditions_errors(conditions: list[dict[str, Any]], path: str) -> list[FieldError]:
    """`validateMatchConditions`."""
    errs = [too_many(path, len(conditions), _MAX_MATCH_CONDITIONS)] if len(conditions) > _MAX_MATCH_CONDITIONS \
        else []
    names: set[str] = set()
    for i, condition in enumerate(conditions):
        at = f"{path}[{i}]"
        expression = (condition.get("expression") or "").strip()
        errs += cel_errors(expression, f"{at}.expression") if expression else [required(f"{at}.expression")]
        name = condition.get("name") or ""
        errs += qualified_name_errors_at(name, f"{at}.name") if name else [required(f"{at}.name")]
        if name:
            if name in names:
                errs.append(duplicate(f"{at}.name", name))
            names.add(name)
    return errs


def param_kind_errors(kind: dict[str, Any], path: str) -> list[FieldError]:
    """`validateParamKind`: apiVersion `group/version` (a DNS subdomain group, a DNS-1035 version), a kind."""
    errs: list[FieldError] = []
    api_version = kind.get("apiVersion") or ""
    if not api_version:
        errs.append(required(f"{path}.apiVersion"))
    elif api_version.count("/") > 1:
        errs.append(invalid(f"{path}.apiVersion", api_version, f"unexpected GroupVersion string: {api_version}"))
    elif api_version != "/":
        group, _, version = api_version.rpartition("/")
        if group and subdomain_errors(group):
            errs.append(invalid(f"{path}.apiVersion", group, ",".join(subdomain_errors(group))))
        if not version:
            errs.append(invalid(f"{path}.apiVersion", api_version, "version must be specified"))
        elif dns1035_label_errors(version):
            errs.append(invalid(f"{path}.apiVersion", version, ",".join(dns1035_label_errors(version))))
    else:
        errs.append(invalid(f"{path}.apiVersion", api_version, "version must be specified"))
    name = kind.get("kind") or ""
    if not name:
        errs.append(required(f"{path}.kind"))
    elif dns1035_label_errors(name.lower()):
        errs.append(invalid(f"{path}.kind", name, "may have mixed case, but should otherwise match: "
                            + ",".join(dns1035_label_errors(name.lower()))))
    return errs


_CEL_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_CEL_RESERVED = frozenset(("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                           "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                           "void", "while"))


def variables_errors(variables: list[dict[str, Any]], path: str) -> list[FieldError]:
    """`validateVariable` of each: a name that is a CEL identifier, an expression that compiles."""
    errs: list[FieldError] = []
    for i, variable in enumerate(variables):
        at = f"{path}[{i}]"
        name, expression = variable.get("name") or "", variable.get("expression") or ""
        if not name.strip():
            errs.append(required(f"{at}.name", "name is not specified"))
        elif not _CEL_IDENTIFIER.fullmatch(name) or name in _CEL_RESERVED:
            errs.append(invalid(f"{at}.name", name, "name is not a valid CEL identifier"))
        if not expression.strip():
            errs.append(required(f"{at}.expression", "expression is not specified"))
        else:
            errs += cel_errors(expression, f"{at}.expression")
    return errs


def match_constraints_errors(constraints: dict[str, Any] | None, path: str) -> list[FieldError]:
    """A policy's `matchConstraints`: required, with one resource rule at least (the policy's type information)."""
    if constraints is None:
        return [required(path)]
    errs = match_resources_errors(constraints, path)
    if not constraints.get("resourceRules"):
        errs.append(required(f"{path}.resourceRules"))
    return errs


def param_kind_text(spec: dict[str, Any]) -> str:
    """A policy's PARAMKIND cell: `apiVersion/kind`, `<unset>`."""
    kind = spec.get("paramKind")
    return "<unset>" if kind is None else f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"
