"""wrk, driven from Python: one Lua script per request kind, and the figures wrk prints, parsed.

`run_wrk(url, script, seconds, connections, headers)` runs Debian's `wrk`
(one thread, `--latency`) in a child process and returns a `WrkResult`:
requests/s, p50 and p99 latency, requests, non-2xx answers (the first few
kept with their status and body, `failures`) and socket errors. The scripts
(`*_script` functions) build their bodies in Lua, so a request costs the load
generator microseconds, never the server's share of the machine; each stops
its thread after `CAP` requests (a bound on count, beside wrk's on time).

No miniplane import: the load is a separate process talking HTTPS over
loopback, like any client.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["WrkResult", "run_wrk", "alternated",
           "wrk_path", "get_script", "list_script", "create_script", "update_script",
           "merge_patch_script", "apply_patch_script", "delete_script", "post_script"]

#: Requests one wrk run may send at most (each script stops its thread there).
CAP = 1_000_000
#: Non-2xx answers a run prints (status and the start of the body) for `WrkResult.failures`.
SHOWN_FAILURES = 3


@dataclass(frozen=True)
class WrkResult:
    """One wrk run: throughput, latency percentiles (ms), counts."""

    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    socket_errors: int
    failures: tuple[str, ...] = ()  # the first SHOWN_FAILURES non-2xx answers: "STATUS body..."

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def wrk_path() -> str | None:
    """The `wrk` binary on PATH (None: run `make bench-tools`)."""
    return shutil.which("wrk")


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def _ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not m:
        raise ValueError(f"not a wrk duration: {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_wrk(output: str) -> WrkResult:
    """The figures of wrk's `--latency` report."""
    # wrk pads a one-letter unit ("1.20s") with a space, a two-letter one ("ms") with none.
    pct = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", output, re.M))
    requests = int(re.search(r"^\s*(\d+) requests in", output, re.M).group(1))
    rps = float(re.search(r"^Requests/sec:\s+([\d.]+)", output, re.M).group(1))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    return WrkResult(rps, _ms(pct["50"]) if "50" in pct else 0.0, _ms(pct["99"]) if "99" in pct else 0.0,
                     requests, int(non_2xx.group(1)) if non_2xx else 0,
                     sum(int(g) for g in sock.groups()) if sock else 0,
                     tuple(re.findall(r"^non-2xx answer: (.*)$", output, re.M)))


def alternated(slices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One figure from the slices (`WrkResult.as_dict()`) of a run taken in turns with another: requests/s
    over their whole time, the median slice's p50, the worst slice's p99, the counts summed, the slices'
    rates kept (`slices`)."""
    time_s = sum(f["requests"] / f["rps"] for f in slices if f["rps"])
    requests = sum(f["requests"] for f in slices)
    return {"rps": requests / time_s if time_s else 0.0,
            "p50_ms": sorted(f["p50_ms"] for f in slices)[len(slices) // 2],
            "p99_ms": max(f["p99_ms"] for f in slices), "requests": requests,
            "non_2xx": sum(f["non_2xx"] for f in slices), "socket_errors": sum(f["socket_errors"] for f in slices),
            "failures": [a for f in slices for a in f.get("failures", ())][:SHOWN_FAILURES],
            "slices": [f["rps"] for f in slices]}


def run_wrk(url: str, script: Path | None, seconds: float, *, connections: int = 16,
            headers: dict[str, str] | None = None, timeout_s: int = 10) -> WrkResult:
    """Run wrk against `url` for `seconds` (at least 1) with `connections`; raises RuntimeError if it fails."""
    cmd = [wrk_path() or "wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency",
           f"--timeout={timeout_s}s"]
    for name, value in (headers or {}).items():
        cmd += ["-H", f"{name}: {value}"]
    if script is not None:
        cmd += ["-s", str(script)]
    cmd.append(url)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    if done.returncode != 0 or "Requests/sec" not in done.stdout:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stdout}{done.stderr}")
    return parse_wrk(done.stdout)


def _lua(s: str) -> str:
    """A Lua string literal."""
    return json.dumps(s)


# wrk.format() drops the -H headers (wrk.headers) when given a table of its own: merge them in.
_HEADERS = """
local merged = {}
local function headers(extra)
  local key = extra["Content-Type"] or ""
  if not merged[key] then
    local h = {}
    for k, v in pairs(wrk.headers) do h[k] = v end
    for k, v in pairs(extra) do h[k] = v end
    merged[key] = h
  end
  return merged[key]
end
"""

# wrk counts a status over 399 as "non-2xx"; the first few are printed for `WrkResult.failures`.
_STOP = _HEADERS + f"""
local sent, failed = 0, 0
response = function(status, headers, body)
  sent = sent + 1
  if status > 399 and failed < {SHOWN_FAILURES} then
    failed = failed + 1
    io.write("non-2xx answer: " .. status .. " " .. string.gsub(string.sub(body or "", 1, 300), "%s+", " ") .. "\\n")
  end
  if sent >= {CAP} then wrk.thread:stop() end
end
"""


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def get_script(path: Path, urls: list[str]) -> Path:
    """GET the `urls` (paths) round-robin."""
    items = ",".join(_lua(u) for u in urls)
    return _write(path, f"""local urls = {{{items}}}
local i = 0
request = function()
  i = i % #urls + 1
  return wrk.format("GET", urls[i])
end
{_STOP}""")


def list_script(path: Path, collection: str, limit: int) -> Path:
    """GET pages of `collection`, `limit` items each, following continue tokens, then again from the start."""
    return _write(path, f"""local token = nil
local sent = 0
request = function()
  local p = {_lua(collection)} .. "?limit={limit}"
  if token then p = p .. "&continue=" .. token end
  return wrk.format("GET", p)
end
response = function(status, headers, body)
  token = string.match(body, '"continue":"([^"]+)"')
  sent = sent + 1
  if sent >= {CAP} then wrk.thread:stop() end
end
""")


def _json_lua(template: dict, marker: str) -> str:
    """`template` as JSON, split around `marker` into a Lua concatenation with the variable `v`."""
    head, tail = json.dumps(template, separators=(",", ":")).split(marker)
    return f"{_lua(head)} .. v .. {_lua(tail)}"


def post_script(path: Path, url: str, body: dict, content_type: str = "application/json") -> Path:
    """POST the same `body` to `url`."""
    return _write(path, f"""{_STOP}
local body = {_lua(json.dumps(body, separators=(",", ":")))}
request = function()
  return wrk.format("POST", {_lua(url)}, headers({{["Content-Type"] = {_lua(content_type)}}}), body)
end
""")


def create_script(path: Path, url: str, template: dict, prefix: str) -> Path:
    """POST `template` with metadata.name `<prefix>-<n>`, n counting from 1."""
    body = _json_lua(template, "@NAME@")
    return _write(path, f"""{_STOP}
local n = 0
request = function()
  n = n + 1
  local v = string.format("%s-%d", {_lua(prefix)}, n)
  return wrk.format("POST", {_lua(url)}, headers({{["Content-Type"] = "application/json"}}), {body})
end
""")


#: A target of a rotating script: (path, the object's name, its namespace).
Target = tuple[str, str, str]


def _rotating(path: Path, method: str, targets: list[Target], template: dict, content_type: str,
              query: str = "") -> Path:
    """`method` each target in turn with `template`: `@NAME@` and `@NS@` are the target's, `@V@` a counter
    (a label value, so that no write is a no-op)."""
    paths = ",".join(_lua(t[0] + query) for t in targets)
    names = ",".join(_lua(t[1]) for t in targets)
    namespaces = ",".join(_lua(t[2]) for t in targets)
    return _write(path, f"""{_STOP}
local paths = {{{paths}}}
local names = {{{names}}}
local namespaces = {{{namespaces}}}
local template = {_lua(json.dumps(template, separators=(",", ":")))}
local n = 0
request = function()
  n = n + 1
  local k = (n - 1) % #paths + 1
  local body = template:gsub("@NAME@", names[k]):gsub("@NS@", namespaces[k]):gsub("@V@", tostring(n))
  return wrk.format({_lua(method)}, paths[k], headers({{["Content-Type"] = {_lua(content_type)}}}), body)
end
""")


def update_script(path: Path, targets: list[Target], template: dict) -> Path:
    """PUT `template` (a whole object: `@NAME@`, `@NS@`, a label value `@V@`) to each target in turn."""
    return _rotating(path, "PUT", targets, template, "application/json")


def merge_patch_script(path: Path, targets: list[Target], label: str) -> Path:
    """PATCH (merge) a label `label` with a counter value onto each target in turn."""
    return _rotating(path, "PATCH", targets, {"metadata": {"labels": {label: "@V@"}}}, "application/merge-patch+json")


def apply_patch_script(path: Path, targets: list[Target], template: dict, manager: str) -> Path:
    """Server-side apply `template` (`@NAME@`, `@NS@`, label value `@V@`) to each target in turn, forced."""
    return _rotating(path, "PATCH", targets, template, "application/apply-patch+yaml",
                     f"?fieldManager={manager}&force=true")


def delete_script(path: Path, names_file: Path, collection: str) -> Path:
    """DELETE `collection/<name>` for each line of `names_file`, once each (then the last again: 404s)."""
    return _write(path, f"""local names = {{}}
for line in io.lines({_lua(str(names_file))}) do names[#names + 1] = line end
local i = 0
request = function()
  if i < #names then i = i + 1 end
  return wrk.format("DELETE", {_lua(collection)} .. "/" .. names[i])
end
{_STOP}""")
