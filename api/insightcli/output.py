"""How the insight commands print: kubectl-like tables, rakkess' marks, `-o json|yaml`.

`table(head, rows)` aligns columns as kubectl's tabwriter does (three spaces
between columns, no trailing blanks); `print_object(obj, fmt, out)` prints an
answered object as kubectl's `-o json` (indent 4) or `-o yaml`;
`rule_text(rule)` is a PolicyRule in one line (`get,list roles.rbac.authorization.k8s.io`);
`MARKS` are the access matrix cells.

Internal to `api.insightcli`: imported by its modules only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

import yaml

__all__ = ["table", "print_object", "table_status", "rule_text", "ref_text", "subject_text", "MARKS",
           "LEGEND", "OUTPUT_FORMATS"]

OUTPUT_FORMATS = ("table", "json", "yaml")
#: The access matrix cells, as rakkess marks them, plus allowed-by-wildcard.
MARKS = {"allowed": "✔", "denied": "✖", "allowedByWildcard": "✔*"}
LEGEND = "✔ allowed   ✖ denied   ✔* allowed only through a wildcard (*) in verbs, apiGroups or resources"


def table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """The rows under `head`, columns aligned, each line ending in a newline."""
    lines = [list(head), *[[str(c) for c in row] for row in rows]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "".join("   ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() + "\n" for line in lines)


def print_object(obj: dict[str, Any], fmt: str, out: TextIO) -> None:
    """Print `obj` as `-o json` or `-o yaml` print it."""
    if fmt == "json":
        out.write(json.dumps(obj, indent=4, ensure_ascii=False) + "\n")
    else:
        out.write(yaml.safe_dump(obj, sort_keys=False, allow_unicode=True))


def table_status(answer: dict[str, Any], fmt: str, out: TextIO) -> dict[str, Any] | None:
    """The answer's status for a table; None once `answer` is printed whole (`-o json`, `-o yaml`)."""
    if fmt != "table":
        print_object(answer, fmt, out)
        return None
    return answer.get("status") or {}


def rule_text(rule: dict[str, Any] | None) -> str:
    """One PolicyRule in a line: verbs, then resources (`res.group`) or URLs, then `[names]`."""
    if not rule:
        return ""
    verbs = ",".join(rule.get("verbs") or ())
    targets = list(rule.get("nonResourceURLs") or ())
    for group in rule.get("apiGroups") or ():
        for resource in rule.get("resources") or ():
            targets.append(f"{resource}.{group}" if group else resource)
    text = f"{verbs} {','.join(dict.fromkeys(targets))}"
    if rule.get("resourceNames"):
        text += f" [{','.join(rule['resourceNames'])}]"
    return text


def ref_text(ref: dict[str, Any] | None) -> str:
    """`Kind ns/name` (or `Kind name`) of an object reference; "-" for none."""
    if not ref:
        return "-"
    where = f"{ref['namespace']}/{ref.get('name', '')}" if ref.get("namespace") else ref.get("name", "")
    return f"{ref.get('kind', '')} {where}"


def subject_text(subject: dict[str, Any]) -> str:
    """`Kind name` of a subject, `ServiceAccount ns/name` for a service account."""
    return ref_text(subject)
