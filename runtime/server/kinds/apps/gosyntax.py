"""Bad values of the apps and batch kinds as Kubernetes' `field.Error` prints them: Go's `%#v` of their
internal types.

`field.Error` prints a bad value that is a string as `%q`, a number as `%v`,
and a struct, a map or a slice by `%#v` (a pointer is printed as what it
points to). The apps rules report maps (a template's labels), label selectors,
`intstr.IntOrString` values and strategy structs that way, so their messages
read, as kube-apiserver's do, `Invalid value: map[string]string{"app":"web"}`
or `Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}`.

A set pointer inside a struct prints as its address in Go
(`(*apps.RollingUpdateDeployment)(0xc000a1b2c8)`), which no client can
predict; a fixed address stands for it here.

Internal to `runtime.server.kinds`: imported by the apps modules and by batch's (a Job's labels and
selector are printed the same way).
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation.gofmt import GoText, go_quote

__all__ = ["go_string_map", "go_label_selector", "go_int_or_string", "go_strategy"]

#: What `%#v` shows for a set pointer (Go prints its address).
_POINTER = "0xc000010000"


def _map(value: Any) -> str:
    if value is None:
        return "map[string]string(nil)"
    items = ", ".join(f"{go_quote(str(k))}:{go_quote(str(v))}" for k, v in sorted(value.items()))
    return "map[string]string{" + items + "}"


def _strings(values: Any) -> str:
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"


def go_string_map(value: dict[str, str] | None) -> GoText:
    """`%#v` of a `map[string]string` (keys sorted, as Go's fmt prints maps); None is the nil map."""
    return GoText(_map(value))


def go_label_selector(selector: dict[str, Any] | None) -> GoText:
    """`%#v` of a `metav1.LabelSelector`: `v1.LabelSelector{MatchLabels:..., MatchExpressions:...}`."""
    selector = selector or {}
    expressions = selector.get("matchExpressions")
    if expressions is None:
        shown = "[]v1.LabelSelectorRequirement(nil)"
    else:
        shown = "[]v1.LabelSelectorRequirement{" + ", ".join(
            f"v1.LabelSelectorRequirement{{Key:{go_quote(str(e.get('key') or ''))}, "
            f"Operator:{go_quote(str(e.get('operator') or ''))}, Values:{_strings(e.get('values'))}}}"
            for e in expressions) + "}"
    return GoText(f"v1.LabelSelector{{MatchLabels:{_map(selector.get('matchLabels'))}, MatchExpressions:{shown}}}")


def go_int_or_string(value: Any) -> GoText:
    """`%#v` of an `intstr.IntOrString` (Type 0 an integer, 1 a string)."""
    if isinstance(value, str):
        return GoText(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}")
    number = value if isinstance(value, int) else 0
    return GoText(f'intstr.IntOrString{{Type:0, IntVal:{number}, StrVal:""}}')


def go_strategy(struct: str, rolling_struct: str, strategy: dict[str, Any]) -> GoText:
    """`%#v` of an update strategy struct (`apps.DeploymentStrategy{Type:"x", RollingUpdate:(*...)(nil)}`)."""
    pointer = "nil" if strategy.get("rollingUpdate") is None else _POINTER
    return GoText(f"apps.{struct}{{Type:{go_quote(str(strategy.get('type') or ''))}, "
                  f"RollingUpdate:(*apps.{rolling_struct})({pointer})}}")
