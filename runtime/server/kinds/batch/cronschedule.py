"""CronJob schedules as Kubernetes parses them: robfig/cron v3's `ParseStandard`, with its error words.

`schedule_error(spec)` is None for a schedule the CronJob controller can run, else the parser's error as
kube-apiserver quotes it in `spec.schedule: Invalid value: "...": <error>`:

- the standard five fields (minute, hour, day of month, month, day of week), each a comma list of `*` or
  `?`, a number or a name (`jan`..`dec`, `sun`..`sat`, any case), a range `a-b`, each with an optional
  step `/n`; the bounds 0-59, 0-23, 1-31, 1-12, 0-6;
- the descriptors `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, and
  `@every <Go duration>`;
- a leading `TZ=<zone> ` or `CRON_TZ=<zone> ` (an IANA zone); CronJob validation refuses those on create
  in 1.28, but they parse.

No library speaks robfig's words (croniter and the others accept other syntaxes and word their errors
their own way), hence this small parser. Pure.
"""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["schedule_error", "zone_error"]

_INT_MAX = 2**63 - 1
_MONTHS = {name: i + 1 for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
_DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
#: (min, max, names) of minute, hour, day of month, month, day of week.
_BOUNDS = ((0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS))
_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
          "h": 3600 * 10**9}
_ATOI = re.compile(r"[+-]?[0-9]+")


class _CronError(ValueError):
    pass


def zone_error(name: str) -> str | None:
    """Go's `time.LoadLocation(name)` error ("unknown time zone X"), None when it loads ("" and UTC do)."""
    if name in ("", "UTC", "Local"):
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {name}"
    return None


def schedule_error(spec: str) -> str | None:
    """`cron.ParseStandard(spec)`'s error, None when `spec` parses (see the module doc)."""
    try:
        _parse(spec)
    except _CronError as exc:
        return str(exc)
    return None


def _parse(spec: str) -> None:
    if not spec:
        raise _CronError("empty spec string")
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        space = spec.find(" ")
        zone = spec[spec.find("=") + 1:space if space >= 0 else len(spec)]
        problem = zone_error(zone)
        if problem:
            raise _CronError(f"provided bad location {zone}: {problem}")
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        _descriptor(spec)
        return
    fields = spec.split()
    if len(fields) != 5:
        raise _CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for text, bounds in zip(fields, _BOUNDS):
        for expr in (part for part in text.split(",") if part):
            _range(expr, *bounds)


def _descriptor(spec: str) -> None:
    if spec in _DESCRIPTORS:
        return
    if spec.startswith("@every "):
        problem = _duration_error(spec[len("@every "):])
        if problem:
            raise _CronError(f"failed to parse duration {spec}: {problem}")
        return
    raise _CronError(f"unrecognized descriptor: {spec}")


def _range(expr: str, low: int, high: int, names: dict[str, int] | None) -> None:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise _CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_and_high) == 1:
            end = high  # "N/step" is "N-max/step"
    else:
        raise _CronError(f"too many slashes: {expr}")
    if start < low:
        raise _CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise _CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise _CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise _CronError(f"step of range should be a positive number: {expr}")


def _int_or_name(text: str, names: dict[str, int] | None) -> int:
    if names and text.lower() in names:
        return names[text.lower()]
    return _int(text)


def _int(text: str) -> int:
    """robfig's `mustParseInt`: Go's `strconv.Atoi`, and no negative number."""
    if not _ATOI.fullmatch(text):
        raise _CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    number = int(text)
    if not -_INT_MAX - 1 <= number <= _INT_MAX:
        raise _CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": value out of range')
    if number < 0:
        raise _CronError(f"negative number ({number}) not allowed: {text}")
    return number


def _duration_error(text: str) -> str | None:
    """Go's `time.ParseDuration(text)` error (`time: invalid duration "x"`), None when it parses."""
    quoted = '"' + text + '"'
    rest = text
    if rest[:1] in ("+", "-"):
        rest = rest[1:]
    if rest == "0":
        return None
    if not rest:
        return f"time: invalid duration {quoted}"
    total = 0
    while rest:
        number = re.match(r"([0-9]*)(\.([0-9]*))?", rest)
        whole, frac = number.group(1), number.group(3)  # type: ignore[union-attr]
        if not whole and not frac:
            return f"time: invalid duration {quoted}"
        rest = rest[number.end():]  # type: ignore[union-attr]
        unit = re.match(r"[^0-9.]*", rest).group(0)  # type: ignore[union-attr]
        if not unit:
            return f"time: missing unit in duration {quoted}"
        if unit not in _UNITS:
            return f'time: unknown unit "{unit}" in duration {quoted}'
        rest = rest[len(unit):]
        total += int(whole or "0") * _UNITS[unit]
        if total > _INT_MAX:
            return f"time: invalid duration {quoted}"
    return None
