"""Resource lists as Kubernetes' core validation reads them: names, quantities, and their Go rendering.

What the cluster kinds share (Node capacity, PV capacity, PVC requests,
LimitRange limits, ResourceQuota hard and used):

- `canonical_resources(obj, paths, prefix)`: every quantity of the resource
  maps at `paths` in its canonical form (kube-apiserver decodes a
  `resource.Quantity` and writes back `String()`: `1000m` is `1`); a value
  that is no quantity is the 400 Kubernetes' decoder answers (`prefix`:
  `<Kind> in version "v1" cannot be handled as a <Kind>`, then
  `resource.ErrFormatWrong`'s message); each rounded up to thousandths
  (`SetDefaults_ResourceList`: `1.5n` is `1m`).
- Resource names (`pkg/apis/core/helper`, `validateResourceName`,
  `validateContainerResourceName`, `ValidateResourceQuotaResourceName`):
  a qualified name; without a `/` it must be a standard resource (one for
  containers, one for quota).
- `quantity_value_errors` (`ValidateResourceQuantityValue`): not negative,
  whole for integer resources (pods, services, extended resources, ...).
- `go_quantity(text)`: a `resource.Quantity` as Go's `%#v` prints it, which
  is how `field.Invalid` shows a Quantity value
  (`resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, ...}`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterable

from runtime.machinery.errors import BadRequest
from runtime.machinery.quantity import Quantity, QuantityError, parse_quantity
from runtime.machinery.validation import FieldError
from runtime.machinery.validation.fielderrors import invalid
from runtime.machinery.validation.gofmt import GoText
from runtime.machinery.validation.names import qualified_name_errors

__all__ = ["canonical_resources", "quantity", "basic_resource_errors", "resource_name_errors",
           "container_resource_name_errors", "quota_resource_name_errors", "quantity_value_errors",
           "is_standard_quota_resource", "go_quantity", "go_resource_list", "NEGATIVE_MSG", "STANDARD_QUOTA_RESOURCES"]

NEGATIVE_MSG = "must be greater than or equal to 0"
_NOT_INTEGER_MSG = "must be an integer"

#: `helper.standardResources` (without the hugepages prefixes, checked apart).
_STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
    "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"))
#: `helper.standardQuotaResources`.
STANDARD_QUOTA_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
    "resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims", "configmaps",
    "services.nodeports", "services.loadbalancers"))
_STANDARD_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))
#: `helper.integerResources`: counted objects, whole numbers only.
_INTEGER_RESOURCES = frozenset(("pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
                                "configmaps", "persistentvolumeclaims", "services.nodeports",
                                "services.loadbalancers"))


def quantity(text: Any) -> Quantity:
    """A stored (canonical, so valid) quantity's value; a JSON number is a quantity as well."""
    return parse_quantity(text if isinstance(text, str) else _number_text(text))


def canonical_resources(obj: dict[str, Any], paths: Iterable[str], prefix: str) -> None:
    """Rewrite each quantity of the maps at `paths` (dotted, `[]` for every item of a list:
    `spec.limits[].max`) canonically; raise the decoder's BadRequest for one that is no quantity."""
    for path in paths:
        for resources in _maps_at(obj, path.split(".")):
            for name, value in list(resources.items()):
                text = value if isinstance(value, str) else _number_text(value)
                try:
                    resources[name] = str(_milli_rounded(parse_quantity(text.strip())))
                except QuantityError as exc:
                    raise BadRequest(f"{prefix}: {exc}") from None


def _milli_rounded(q: Quantity) -> Quantity:
    """`SetDefaults_ResourceList`: a quantity rounded up (away from zero) to thousandths."""
    thousandths = q.value * 1000
    if thousandths.denominator == 1:
        return q
    magnitude = math.ceil(abs(thousandths))
    return Quantity(Fraction(magnitude if q.value > 0 else -magnitude, 1000), q.format)


def _number_text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise QuantityError()
    return repr(value) if isinstance(value, float) else str(value)


def _maps_at(node: Any, steps: list[str]) -> Iterable[dict[str, Any]]:
    if not steps:
        if isinstance(node, dict):
            yield node
        return
    step, rest = steps[0], steps[1:]
    each = step.endswith("[]")
    child = node.get(step.removesuffix("[]")) if isinstance(node, dict) else None
    if each:
        for item in child if isinstance(child, list) else ():
            yield from _maps_at(item, rest)
    elif child is not None:
        yield from _maps_at(child, rest)


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _is_native(name: str) -> bool:
    """`helper.IsNativeResource`: no domain, or one in kubernetes.io."""
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    """`helper.IsExtendedResourceName`: a qualified name outside kubernetes.io, not `requests.`-prefixed."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or _is_extended(name)


def resource_name_errors(name: str, path: str) -> list[FieldError]:
    """`validateResourceName`: a qualified name; a standard resource unless domain-prefixed."""
    errs = [invalid(path, name, msg) for msg in qualified_name_errors(name)]
    if errs:
        return errs
    if "/" not in name and not (name in _STANDARD_RESOURCES or _is_quota_hugepages(name)):
        return [invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def _is_quota_hugepages(name: str) -> bool:
    return _is_hugepages(name) or name.startswith("requests.hugepages-")


def container_resource_name_errors(name: str, path: str) -> list[FieldError]:
    """`validateContainerResourceName`: cpu, memory, ephemeral-storage, hugepages-*, or an extended resource."""
    errs = resource_name_errors(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or _is_hugepages(name)):
            return errs + [invalid(path, name, "must be a standard resource for containers")]
    elif not _is_native(name) and not _is_extended(name):
        return errs + [invalid(path, name, "doesn't follow extended resource name standard")]
    return errs


def is_standard_quota_resource(name: str) -> bool:
    """`helper.IsStandardQuotaResourceName`."""
    return name in STANDARD_QUOTA_RESOURCES or _is_quota_hugepages(name)


def quota_resource_name_errors(name: str, path: str) -> list[FieldError]:
    """`ValidateResourceQuotaResourceName`: a resource name; a standard quota resource unless it has a `/`
    (`count/deployments.apps`, `example.com/gpu`)."""
    errs = resource_name_errors(name, path)
    if "/" not in name and not is_standard_quota_resource(name):
        return errs + [invalid(path, name, "must be a standard resource for quota")]
    return errs


def basic_resource_errors(text: str, path: str) -> list[FieldError]:
    """`validateBasicResource`: not negative (Go shows `Value()`: whole units, rounded away from zero)."""
    value = quantity(text).value
    return [invalid(path, -math.ceil(-value), "must be a valid resource quantity")] if value < 0 else []


def quantity_value_errors(name: str, text: str, path: str) -> list[FieldError]:
    """`ValidateResourceQuantityValue` of canonical `text`: not negative; whole for integer resources."""
    value = quantity(text)
    errs = [invalid(path, str(value), NEGATIVE_MSG)] if value.value < 0 else []
    if _is_integer_resource(name) and value.milli() % 1000:
        errs.append(invalid(path, go_quantity(text, stringified=False), _NOT_INTEGER_MSG))
    return errs


_BINARY_EXP = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def go_quantity(text: str, *, stringified: bool = True) -> GoText:
    """A quantity as Go's `%#v` prints the `resource.Quantity` that `ParseQuantity(text)` returns.

    `stringified`: its `String()` was called before it was printed (which caches the canonical text
    in `s`); otherwise `s` holds `text` only where ParseQuantity kept it (a canonical input). Values
    beyond the int64 fast path (`0.5Gi`) print the canonical text, as Go's pointer cannot be shown.
    """
    q = parse_quantity(text)
    body = text.lstrip("+-")
    whole, frac, suffix = _split_number(body)
    negative = text.startswith("-")
    whole = whole.lstrip("0") or "0"
    if suffix in _BINARY_EXP:
        fmt, exponent, mantissa = "BinarySI", _BINARY_EXP[suffix], 1 << _BINARY_EXP[suffix]
        fast = not frac and 15 - len(whole) - int(exponent * 3 / 10) - 1 >= 0
        scale = 0
    else:
        fmt = "DecimalSI" if suffix in _DECIMAL_EXP else "DecimalExponent"
        exponent = _DECIMAL_EXP[suffix] if suffix in _DECIMAL_EXP else int(suffix[1:])
        mantissa = 1
        fast = 18 - (len(whole) + len(frac)) >= 0
        scale = exponent - len(frac)
        fast = fast and scale >= -9
    shifted = whole + frac
    value = int(shifted) * mantissa if fast else 0
    if not fast or value >= 1 << 63:
        return GoText(str(q))
    if fmt == "BinarySI":
        kept = exponent % 10 == 0 and int(shifted) & 7 != 0
    else:
        kept = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    cached = text if kept else (str(q) if stringified else "")
    signed = -value if negative else value
    return GoText(f"resource.Quantity{{i:resource.int64Amount{{value:{signed}, scale:{scale}}}, "
                  f"d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:\"{cached}\", Format:\"{fmt}\"}}")


def _split_number(body: str) -> tuple[str, str, str]:
    """`body` (no sign) as its integer digits, fraction digits and suffix."""
    i = 0
    while i < len(body) and body[i].isdigit():
        i += 1
    whole, rest = body[:i], body[i:]
    frac = ""
    if rest.startswith("."):
        j = 1
        while j < len(rest) and rest[j].isdigit():
            j += 1
        frac, rest = rest[1:j], rest[j:]
    return whole, frac, rest


def go_resource_list(resources: dict[str, str]) -> GoText:
    """A resource map as Go's `%#v` prints a `core.ResourceList` (keys sorted, each a `go_quantity`)."""
    items = ", ".join(f'"{name}":{go_quantity(text)}' for name, text in sorted(resources.items()))
    return GoText("core.ResourceList{" + items + "}" if resources else "core.ResourceList(nil)")
