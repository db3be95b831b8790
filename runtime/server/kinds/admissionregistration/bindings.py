"""What the two policy bindings share: their policy name, `paramRef` and `kubectl get` columns (Kubernetes'
`validateParamRef`, `printValidatingAdmissionPolicyBinding` and `printMutatingAdmissionPolicyBinding`).

- `policy_name_errors`: required, a DNS subdomain.
- `param_ref_errors`: a name (a path segment) or a selector, not both ("name
  and selector are mutually exclusive", at each), one of them ("one of name
  or selector must be specified"); parameterNotFoundAction required, Allow or
  Deny.
- `BINDING_COLUMNS`: NAME POLICYNAME PARAMREF AGE; the param ref shown as
  `namespace/name`, `*/name` without a namespace, the selector as Go prints a
  `*metav1.LabelSelector` (its generated `String()`), `<unset>` without one.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation import FieldError, label_selector_errors
from runtime.machinery.validation.fielderrors import forbidden, invalid, not_supported, required
from runtime.machinery.validation.names import path_segment_errors
from runtime.server.kinds.cluster.volumes import subdomain_errors
from runtime.server.kinds.columns import AGE_COLUMN, NAME_COLUMN, Columns, age, column

__all__ = ["policy_name_errors", "param_ref_errors", "selector_string", "BINDING_COLUMNS"]

_NOT_FOUND_ACTIONS = ["Deny", "Allow"]  # kube lists them in this order, not sorted
_EXCLUSIVE = "name and selector are mutually exclusive"


def policy_name_errors(name: str, path: str) -> list[FieldError]:
    """A binding's `policyName`."""
    if not name:
        return [required(path)]
    return [invalid(path, name, msg) for msg in subdomain_errors(name)]


def param_ref_errors(ref: dict[str, Any] | None, path: str) -> list[FieldError]:
    """`validateParamRef` (nothing without a paramRef)."""
    if ref is None:
        return []
    errs: list[FieldError] = []
    name, selector = ref.get("name") or "", ref.get("selector")
    if name:
        errs += [invalid(f"{path}.name", name, msg) for msg in path_segment_errors(name)]
        if selector is not None:
            errs.append(forbidden(f"{path}.name", _EXCLUSIVE))
    if selector is not None:
        errs += label_selector_errors(selector, f"{path}.selector")
        if name:
            errs.append(forbidden(f"{path}.selector", _EXCLUSIVE))
    if not name and selector is None:
        errs.append(required(path, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        errs.append(required(f"{path}.parameterNotFoundAction"))
    elif action not in _NOT_FOUND_ACTIONS:
        errs.append(not_supported(f"{path}.parameterNotFoundAction", action, _NOT_FOUND_ACTIONS))
    return errs


def selector_string(selector: dict[str, Any]) -> str:
    """Go's generated `(*metav1.LabelSelector).String()`: `&LabelSelector{MatchLabels:map[string]string{a: b,},
    MatchExpressions:[]LabelSelectorRequirement{...},}`."""
    labels = selector.get("matchLabels") or {}
    shown = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or [])
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{shown}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")


def _param_ref_text(ref: dict[str, Any] | None) -> str:
    if ref is None:
        return "<unset>"
    if ref.get("name"):
        # Whether the param is cluster-scoped is not known here: without a namespace, kube shows "*".
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    if ref.get("selector") is not None:
        return selector_string(ref["selector"])
    return "<unset>"


def _cells(obj: dict[str, Any]) -> list[Any]:
    meta, spec = obj["metadata"], obj.get("spec") or {}
    return [meta.get("name", ""), spec.get("policyName", ""), _param_ref_text(spec.get("paramRef")),
            age(meta.get("creationTimestamp"))]


BINDING_COLUMNS = Columns((
    NAME_COLUMN,
    column("PolicyName", "PolicyName indicates the policy definition which the policy binding binded to"),
    column("ParamRef", "ParamRef indicates the param resource which sets the configration param"),
    AGE_COLUMN,
), _cells)
