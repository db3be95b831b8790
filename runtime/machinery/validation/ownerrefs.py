"""Owner references as apimachinery validates them (`ValidateOwnerReferences`, `validateOwnerReference`).

Contract: `owner_reference_errors(refs)` returns the field errors of
`metadata.ownerReferences`, in Kubernetes' order and words (1.32), or []:

- each reference needs an apiVersion with a version (`schema.FromAPIVersionAndKind`:
  `v1` and `apps/v1` have one; ``, `/`, `apps/` and `a/b/c` none), a kind,
  a name and a uid (`metadata.ownerReferences.uid: Invalid value: "": uid must
  not be empty`: Kubernetes writes no index);
- a core/v1 Event may own nothing (`BannedOwners`);
- at most one reference is the controller: each further one is an error
  naming the first and itself as `Kind/name`.

Bad values that are Go structs are printed as `field.Error` prints them: one
reference by its generated `String()` (`&OwnerReference{Kind:Event,...}`),
the whole list by `%#v`. Go's `%#v` shows a set `*bool` as its address
(`(*bool)(0xc000a1b2c8)`), which no client can predict; miniplane prints a
fixed one. Pure: no I/O.

Internal to `runtime.machinery.validation`: imported by its modules only.
"""

from __future__ import annotations

from typing import Any

from runtime.machinery.validation.fielderrors import FieldError, invalid
from runtime.machinery.validation.gofmt import GoText, go_quote

__all__ = ["owner_reference_errors"]

_PATH = "metadata.ownerReferences"
#: BannedOwners: group, version, kind.
_BANNED = {("", "v1", "Event")}
#: What `%#v` shows for a set pointer (Go prints its address).
_POINTER = "0xc000010000"


def _group_version(api_version: str) -> tuple[str, str]:
    """`schema.ParseGroupVersion`, with what does not parse as no group and no version."""
    if api_version in ("", "/"):
        return "", ""
    if api_version.count("/") == 0:
        return "", api_version
    if api_version.count("/") == 1:
        group, _, version = api_version.partition("/")
        return group, version
    return "", ""


def _pointer_string(value: Any) -> str:
    """The generated `String()`'s `valueToStringGenerated` of a `*bool`: `nil` or `*true`."""
    return "nil" if value is None else "*" + ("true" if value else "false")


def _stringer(ref: dict[str, Any]) -> GoText:
    """`(*OwnerReference).String()`: fields in protobuf order, values bare."""
    return GoText(f"&OwnerReference{{Kind:{ref.get('kind') or ''},Name:{ref.get('name') or ''},"
                  f"UID:{ref.get('uid') or ''},APIVersion:{ref.get('apiVersion') or ''},"
                  f"Controller:{_pointer_string(ref.get('controller'))},"
                  f"BlockOwnerDeletion:{_pointer_string(ref.get('blockOwnerDeletion'))},}}")


def _go_syntax(ref: dict[str, Any]) -> str:
    """`%#v` of one `metav1.OwnerReference`: fields in Go's order, strings quoted, pointers as addresses."""
    def pointer(key: str) -> str:
        return "(*bool)(nil)" if ref.get(key) is None else f"(*bool)({_POINTER})"
    return (f"v1.OwnerReference{{APIVersion:{go_quote(ref.get('apiVersion') or '')}, "
            f"Kind:{go_quote(ref.get('kind') or '')}, Name:{go_quote(ref.get('name') or '')}, "
            f"UID:{go_quote(ref.get('uid') or '')}, Controller:{pointer('controller')}, "
            f"BlockOwnerDeletion:{pointer('blockOwnerDeletion')}}}")


def _reference_errors(ref: dict[str, Any]) -> list[FieldError]:
    api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
    group, version = _group_version(api_version)
    errs: list[FieldError] = []
    if not version:
        errs.append(invalid(f"{_PATH}.apiVersion", api_version, "version must not be empty"))
    if not kind:
        errs.append(invalid(f"{_PATH}.kind", kind, "kind must not be empty"))
    for key in ("name", "uid"):
        if not ref.get(key):
            errs.append(invalid(f"{_PATH}.{key}", ref.get(key) or "", f"{key} must not be empty"))
    if (group, version, kind) in _BANNED:
        errs.append(invalid(_PATH, _stringer(ref), f"{group}/{version}, Kind={kind} is disallowed from being an "
                                                   "owner"))
    return errs


def owner_reference_errors(refs: list[dict[str, Any]]) -> list[FieldError]:
    """The errors of `metadata.ownerReferences` (see the module doc)."""
    errs: list[FieldError] = []
    first_controller = ""
    for ref in refs:
        errs.extend(_reference_errors(ref))
        if ref.get("controller") is True:
            current = f"{ref.get('kind') or ''}/{ref.get('name') or ''}"
            if first_controller:
                shown = GoText("[]v1.OwnerReference{" + ", ".join(_go_syntax(r) for r in refs) + "}")
                errs.append(invalid(_PATH, shown, 'Only one reference can have Controller set to true. Found "true" '
                                                  f"in references for {first_controller} and {current}"))
            else:
                first_controller = current
    return errs
