"""Feature gates: the spec's gates with their defaults; `--feature-gates A=true,B=false`."""

from __future__ import annotations

__all__ = ["DEFAULT_GATES", "parse_feature_gates"]

DEFAULT_GATES: dict[str, bool] = {
    "CBORServingAndStorage": False,
    "AllowUnsafeMalformedObjectDeletion": False,
    "APIResponseCompression": True,
    "ListFromCacheSnapshot": True,
}


def parse_feature_gates(text: str) -> dict[str, bool]:
    """The defaults overridden by `text`; ValueError for an unknown gate or a non-boolean value."""
    gates = dict(DEFAULT_GATES)
    for item in filter(None, (p.strip() for p in (text or "").split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if name not in DEFAULT_GATES:
            raise ValueError(f"unrecognized feature gate: {name}")
        if not sep or value.strip().lower() not in ("true", "false"):
            raise ValueError(f"invalid value of {name}: {value!r}, err: expected true or false")
        gates[name] = value.strip().lower() == "true"
    return gates
