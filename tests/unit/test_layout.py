"""The architecture's rules (docs/design.md), each checked on the source; each check is shown failing on a plant.

- runtime/ imports neither api/ nor controllers/;
- controllers/ import neither api/ nor storage nor registry internals (only the `runtime.server.registry` facade);
- storage imports nothing of miniplane but storage (no registry, no kinds);
- in api/, only the assembly (and the command that calls it) opens stores or imports controllers;
  handlers reach data through the registry facade;
- no module imports a private name (`_x`) from another module, nor reads one off an imported project module;
- no module reads a private name of another module's object (`watcher._deliver` in another module);
- no test, benchmark or example reaches into a private name of the project: no `from runtime.x import _y`,
  no `obj._y`, `getattr(obj, "_y")` or `monkeypatch.setattr(obj, "_y", ...)` unless the file itself
  defines `_y` (its own fake's method or attribute); it goes through a public seam (`statistics()`, a fake);
- no import inside a function, except one that breaks a real cycle and says so in a comment, or one a command
  makes only when it runs, for a fast start, saying so (`# late import: ...`);
- no kind-name comparison outside the strategies (`runtime/server/kinds/`) and the RBAC policy library
  (`runtime/server/rbac/`, whose data names kinds: a roleRef's or subject's `kind`, the objects it indexes);
- nothing adds to a registry's admission plug-ins after construction, tests included (`admission=` is the
  constructor's);
- the registry package imports one way: answers <- primitives <- verbs <- facade, without cycles;
- each layer of runtime/ imports only the layers below it (machinery and models: no other; client and
  controller: no server module, but the in-process `runtime.client.local` and `runtime.controller.testing`);
- a module whose docstring says it is internal to a package (`Internal to `pkg``) is imported by that
  package's modules only (tests aside);
- no module over 600 lines, tests and benchmarks included (generated code aside: protobuf's, and the models
  `python -m runtime.models.codegen` writes, known by their first line);
- every package has a contract docstring and `__all__` (the generated protobuf package too);
- `runtime.client.http` loads no server code (no `runtime.server`, CEL, JWT, RE2 or cryptography module) and
  at most 40 project modules; the informer, manager and work queue load no server code either (each checked in
  a fresh interpreter); machinery's one import of the server is the scheme's, late, inside the function that
  binds a built-in kind's strategy when it is first asked for.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from runtime.models.catalog import BUILTIN_KINDS
from runtime.models.codegen import MARKER as GENERATED_MARKER
from tests.support.footprint import PACKAGES, loaded_by, project_modules, server_code

ROOT = Path(__file__).resolve().parents[2]
#: Every folder of Python the project writes: the packages, and what tests, measures and shows them.
WRITTEN = (*PACKAGES, "tests", "bench", "examples")
KIND_NAMES = {info.kind for info in BUILTIN_KINDS}
MAX_LINES = 600


def _sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py") if "proto" not in p.parts)


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _imports(tree: ast.AST, module: str = "") -> list[tuple[str, list[str], ast.stmt]]:
    """(imported module, names, node) for every import; relative imports resolved against `module`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")[: -node.level]
                base = ".".join([*parts, base] if base else parts)
            found.append((base, [a.name for a in node.names], node))
    return found


def _parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), filename=str(path))


# ---- the rules, as functions of one module's source (so a plant can be checked too) ----------------

def forbidden_imports(source: str, module: str, prefixes: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    """Imports of `module` that start with one of `prefixes` (and are not in `allowed`)."""
    out = []
    for name, names, _ in _imports(ast.parse(source), module):
        targets = [name] + [f"{name}.{n}" for n in names]
        if any(t == p or t.startswith(p + ".") for t in targets for p in prefixes) \
                and not any(name == a or name.startswith(a + ".") for a in allowed):
            out.append(name)
    return out


def private_imports(source: str, module: str) -> list[str]:
    """`from other import _name` (a private name of another module)."""
    return [f"{name}.{n}" for name, names, _ in _imports(ast.parse(source), module)
            for n in names if n.startswith("_") and not n.startswith("__") and name != module]


def _imported_modules(tree: ast.AST, module: str) -> set[str]:
    """The local names `tree` binds to project modules (`import runtime.x as m`, `from runtime import x`)."""
    names = set()
    for name, imported, node in _imports(tree, module):
        if name.split(".")[0] not in PACKAGES:
            continue
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
        else:
            names |= {a.asname or a.name for a in node.names if _is_module(f"{name}.{a.name}")}
    return names


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def private_module_reads(source: str, module: str) -> list[str]:
    """`m._name` where `m` is an imported project module (the attribute form of a private import)."""
    tree = ast.parse(source)
    modules = _imported_modules(tree, module)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                out.append(ast.unparse(node))
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


#: Names with a leading underscore that are not the project's: each is someone else's public spelling.
NOT_PRIVATE = {
    "_ref": "gnostic's OpenAPI v2 protobuf names the `$ref` field `_ref` (runtime/machinery/serializer/proto)",
    "_exit": "os._exit is os's documented exit without cleanup (a forked worker's end)",
    "_get_current_object": "werkzeug's LocalProxy documents it: the object a proxy stands for",
    "_actions": "argparse has no public way to walk a parser's arguments",
    "_SubParsersAction": "argparse's type of add_subparsers(), named nowhere else",
}
#: The modules whose job is to touch a library's internals, and why (their caveats at their top).
TOUCHES_LIBRARY_INTERNALS = {
    "api.serving.hypercorn_internals": "Hypercorn's connection classes, to put miniplane's HTTP/1.1 and HTTP/2 in h11's and h2's place",
    "tests.support.callcount": "trio's scheduler's random, seeded so that a count is the same on every run",
}
_ATTRIBUTE_CALLS = {"getattr", "setattr", "hasattr", "delattr"}


def _own_names(tree: ast.AST) -> set[str]:
    """What a file defines itself: functions, classes, class attributes, `self._x = ...` in its classes."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                    [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
                own |= {t.id for t in targets if isinstance(t, ast.Name)}
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            own.add(node.attr)
    return own


def private_reaches(source: str, module: str) -> list[str]:
    """A test's reaches into the project's private names (see the module docstring), as source text."""
    tree = ast.parse(source)
    own = _own_names(tree)

    def foreign(name: str) -> bool:
        return _private(name) and name not in own and name not in NOT_PRIVATE

    out = [f"import {n}" for n in private_imports(source, module) if n.split(".")[0] in PACKAGES]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and foreign(node.attr):
            out.append(ast.unparse(node))
        elif isinstance(node, ast.Call):
            # getattr(obj, "_y"), monkeypatch.setattr(obj, "_y", v) and monkeypatch.setattr("pkg.mod._y", v)
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            named = [a.value for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if fn in _ATTRIBUTE_CALLS and any(foreign(n.rsplit(".", 1)[-1]) for n in named):
                out.append(ast.unparse(node))
    return out


def function_imports(source: str) -> list[int]:
    """Lines of imports inside a function that say neither which cycle they break nor that they are late
    (`# late import: WHY`: a command's module loads what only running it needs when it runs)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    start = node.lineno - 1  # a comment atop a block of imports speaks for the block
                    while start > 0 and lines[start - 1].strip().startswith(("import ", "from ")):
                        start -= 1
                    near = " ".join(lines[max(0, start - 2):node.lineno]).lower()
                    if "cycle" not in near and "late import:" not in near:
                        out.append(node.lineno)
    return sorted(set(out))


def late_imports(source: str, module: str) -> set[str]:
    """The modules `source` imports inside functions only: when called, never at import time."""
    tree = ast.parse(source)
    inside = {id(node) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
              for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))}
    found = _imports(tree, module)
    return {n for n, _, node in found if id(node) in inside} - {n for n, _, node in found if id(node) not in inside}


def kind_comparisons(source: str) -> list[int]:
    """Lines comparing something with a served kind's name (`x == "Namespace"`, `k in ("Role", ...)`)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        for operand in [node.left, *node.comparators]:
            values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            if any(isinstance(v, ast.Constant) and v.value in KIND_NAMES for v in values):
                out.append(node.lineno)
    return out


def registry_patches(source: str) -> list[int]:
    """Lines that set an attribute of a registry from outside it (`registry.authorizer = ...`): its parts
    are constructor arguments."""
    out = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == "registry":
                out.append(node.lineno)
    return out


def admission_additions(source: str) -> list[int]:
    """Lines that add to a registry's admission plug-ins after construction (`srv.registry.admission.append(p)`,
    `registry.admission += ...`): the chain is the constructor's `admission=`, fixed from then on."""
    def is_admission(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "admission" and (
            isinstance(node.value, ast.Name) and node.value.id.endswith("registry")
            or isinstance(node.value, ast.Attribute) and node.value.attr.endswith("registry"))
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_admission(node.func.value):
            out.append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(is_admission(t) for t in targets):
                out.append(node.lineno)
    return out


MAX_MEMBERS = 20


def crowded_classes(source: str) -> list[str]:
    """Classes with more than MAX_MEMBERS members of their own (methods, properties, class attributes
    defined in the class body; inherited ones are the parts' and count there)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        own = set()
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                own.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                own |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                own.add(stmt.target.id)
        if len(own) > MAX_MEMBERS:
            out.append(f"{node.name}: {len(own)}")
    return out


# ---- plants: each rule fails on a violation ------------------------------------------------------

def test_each_rule_fails_on_a_planted_violation():
    assert forbidden_imports("from api.app import create_app\n", "runtime.x", ("api", "controllers")) == ["api.app"]
    assert forbidden_imports("import controllers.gc\n", "runtime.x", ("api", "controllers")) == ["controllers.gc"]
    assert forbidden_imports("from runtime.server.registry.primitives import RegistryCore\n", "controllers.x",
                             ("runtime.server.registry",), allowed=()) == ["runtime.server.registry.primitives"]
    assert forbidden_imports("from runtime.server.kinds import BUILTIN_KINDS\n", "runtime.machinery.scheme",
                             LAYERS[("runtime/machinery", "runtime/models")]) == ["runtime.server.kinds"]
    assert forbidden_imports("from runtime.server import registry\n", "runtime.server.storage.x",
                             ("runtime.server.registry",)) == ["runtime.server"]
    assert private_imports("from runtime.server.registry.primitives import _encoder\n", "runtime.server.registry.writes") \
        == ["runtime.server.registry.primitives._encoder"]
    assert private_module_reads("from runtime.server.storage import etcd\nn = etcd._AWAITED_MAX\n", "tests.x") \
        == ["etcd._AWAITED_MAX"]
    assert private_module_reads("import runtime.server.storage.etcd.store as e\nn = e._x\n", "api.x") == ["e._x"]
    assert private_module_reads("from runtime.server.storage import EtcdStore\nn = EtcdStore.open\n", "api.x") == []
    assert function_imports("def f():\n    import json\n") == [2]
    assert function_imports("def f():\n    # breaks the cycle a <-> b\n    import json\n") == []
    assert function_imports("def f():\n    # late import: only serving needs it\n    import json\n") == []
    assert function_imports("def f():\n    # late, for speed\n    import json\n") == [3]
    block = "def f():\n    # late import: only serving needs them\n" + "    import json\n" * 3
    assert function_imports(block) == []
    assert function_imports(block.replace("    import json\n", "    import json\n\n", 1)) == [5, 6]
    assert kind_comparisons('if rt.kind == "Namespace":\n    pass\n') == [1]
    assert kind_comparisons('ok = kind in ("Role", "ClusterRole")\n') == [1]
    assert kind_comparisons('ok = verb == "get"\n') == []
    assert registry_patches("registry.authorizer = wrap(registry.authorizer)\n") == [1]
    assert registry_patches("registry = Registry(store, scheme, authorizer)\n") == []
    assert admission_additions("srv.registry.admission.append(AdmissionPlugin('hold', hold))\n") == [1]
    assert admission_additions("registry.admission += (plugin,)\n") == [1]
    assert admission_additions("registry = Registry(store, scheme, admission=[plugin])\nn = len(registry.admission)\n") \
        == []
    crowded = "class Big:\n" + "".join(f"    def m{i}(self): ...\n" for i in range(MAX_MEMBERS)) + \
        "    x = 1\n    @property\n    def p(self): ...\n"
    assert crowded_classes(crowded) == [f"Big: {MAX_MEMBERS + 2}"]
    assert crowded_classes("class Small:\n    x = 1\n    def f(self): ...\n") == []
    assert internal_package('"""Walks.\n\nInternal to `runtime.machinery.patch`: imported by its modules only.\n"""\n') \
        == "runtime.machinery.patch"
    assert internal_package('"""Walks, public."""\n') is None
    assert _cycles({"a": {"b"}, "b": {"a"}}) != []
    assert _too_long("x = 1\n" * (MAX_LINES + 1)) and not _too_long("x = 1\n")
    assert not _too_long(GENERATED_MARKER + "\n" + "x = 1\n" * (MAX_LINES + 1))


def test_the_private_reach_rule_fails_on_planted_reaches():
    assert private_reaches("from runtime.machinery.selectors.parser import _lex\n", "tests.unit.x") \
        == ["import runtime.machinery.selectors.parser._lex"]
    assert private_reaches("assert store._awaited == {}\n", "tests.x") == ["store._awaited"]
    assert private_reaches("store._watches[object()] = 10\n", "tests.x") == ["store._watches"]
    assert private_reaches("x = srv.plane.store._writer\n", "tests.x") == ["srv.plane.store._writer"]
    assert private_reaches("monkeypatch.setattr(SqliteStore, '_apply_batch', f)\n", "tests.x") \
        == ["monkeypatch.setattr(SqliteStore, '_apply_batch', f)"]
    assert private_reaches("monkeypatch.setattr('runtime.server.storage.sqlite.store._open_writer', f)\n", "tests.x") \
        == ["monkeypatch.setattr('runtime.server.storage.sqlite.store._open_writer', f)"]
    assert private_reaches("n = getattr(index, '_bindings')\n", "tests.x") == ["getattr(index, '_bindings')"]
    # Not reaches: the file's own fake, a dunder, a library's public underscore, a plain string argument.
    own = ("class Fake:\n    def __init__(self):\n        self._held = 1\n"
           "    def _go(self):\n        return self._held\n")
    assert private_reaches(own + "f = Fake()\nf._go()\n", "tests.x") == []
    assert private_reaches("n = obj.__class__.__name__\nr = doc._ref\n", "tests.x") == []
    assert private_reaches("v = headers.get('_x', 1)\n", "tests.x") == []


# ---- the rules on the tree ------------------------------------------------------------------------

def _offenders(folders: tuple[str, ...], check) -> list[str]:
    out = []
    for path in _sources(*folders):
        found = check(path.read_text(), _module(path))
        if found:
            out.append(f"{path.relative_to(ROOT)}: {found}")
    return out


def test_runtime_imports_neither_api_nor_controllers():
    assert _offenders(("runtime",), lambda s, m: forbidden_imports(s, m, ("api", "controllers"))) == []


#: The layers of runtime/ (runtime/__init__.py) and what each may not import.
LAYERS = {
    ("runtime/machinery", "runtime/models"): ("runtime.server", "runtime.client", "runtime.controller"),
    ("runtime/client", "runtime/controller"): ("runtime.server",),
}
#: Modules that cross a layer on purpose, each with its reason.
LAYER_CROSSINGS = {
    "runtime.client.local": "the in-process transport: calls the registry",
    "runtime.controller.testing": "the test env: starts an in-process server",
}
#: The one crossing made late, inside a function (module, imported): the scheme binds a built-in kind's
#: strategy when it is first asked for (the footprint tests check that a client never gets there).
LATE_CROSSINGS = {("runtime.machinery.scheme", "runtime.server.kinds")}


def layer_crossings(source: str, module: str, prefixes: tuple[str, ...]) -> list[str]:
    """What `module` imports of the layers `prefixes` names, but the crossings allowed above."""
    if module in LAYER_CROSSINGS:
        return []
    late = late_imports(source, module)
    return [n for n in forbidden_imports(source, module, prefixes) if not ((module, n) in LATE_CROSSINGS and n in late)]


def test_each_layer_imports_only_the_layers_below_it():
    for folders, prefixes in LAYERS.items():
        assert _offenders(folders, lambda s, m: layer_crossings(s, m, prefixes)) == [], folders


def internal_package(source: str) -> str | None:
    """The package a module's docstring says it is internal to (`Internal to `pkg``), None if public."""
    doc = ast.get_docstring(ast.parse(source)) or ""
    found = re.search(r"^Internal to `([\w.]+)`", doc, re.M)
    return found.group(1) if found else None


def test_an_internal_module_is_imported_only_inside_its_package():
    """A module that says it is internal to a package is imported by that package's modules only (tests may
    test it): what others need, the package's `__init__` or a public module gives (issue 36, point 4)."""
    internal = {}
    for path in _sources(*PACKAGES):
        package = internal_package(path.read_text())
        if package is not None:
            internal[_module(path)] = package
            assert _module(path).startswith(package + "."), f"{path}: not a module of {package}"
    assert len(internal) > 50  # the rule has something to check

    def check(source: str, module: str) -> list[str]:
        return [n for n, names, _ in _imports(ast.parse(source), module)
                for target in [n, *(f"{n}.{a}" for a in names)]
                if target in internal and not module.startswith(internal[target] + ".")
                and module != internal[target]]
    assert _offenders(PACKAGES, check) == []


def test_controllers_import_neither_api_nor_storage_nor_registry_internals():
    def check(source: str, module: str) -> list[str]:
        found = forbidden_imports(source, module, ("api", "runtime.server.storage", "runtime.server.watchcache"))
        # The registry's facade (`runtime.server.registry`) is public; its modules are not.
        return found + [n for n, _, _ in _imports(ast.parse(source), module) if n.startswith("runtime.server.registry.")]
    assert _offenders(("controllers",), check) == []


def test_storage_imports_nothing_of_miniplane_but_storage():
    def check(source: str, module: str) -> list[str]:
        return [n for n, _, _ in _imports(ast.parse(source), module)
                if (n == "runtime" or n.startswith(("runtime.", "api", "controllers")))
                and not n.startswith("runtime.server.storage")]
    assert _offenders(("runtime/server/storage",), check) == []


def test_no_registry_part_is_set_after_construction():
    assert _offenders(("runtime", "api", "controllers"), lambda s, m: registry_patches(s)) == []


def test_no_admission_plugin_is_added_after_construction():
    assert _offenders(WRITTEN, lambda s, m: admission_additions(s)) == []


def test_strategy_parts_are_small():
    """No class in the kinds package has more than MAX_MEMBERS members of its own (issue 36, point 1)."""
    assert _offenders(("runtime/server/kinds",), lambda s, m: crowded_classes(s)) == []


def test_only_the_assembly_opens_stores_and_starts_controllers():
    allowed = {"api.assembly", "api.cli"}
    offenders = [f"{p.relative_to(ROOT)}: {found}" for p in _sources("api") if _module(p) not in allowed
                 for found in [forbidden_imports(p.read_text(), _module(p),
                                                 ("runtime.server.storage", "runtime.server.watchcache", "controllers",
                                                  "runtime.server.registry.primitives"))] if found]
    assert offenders == []


def test_no_module_imports_a_private_name_of_another():
    assert _offenders(PACKAGES, private_imports) == []
    assert _offenders(WRITTEN, private_module_reads) == []


def test_no_module_reads_a_private_name_of_another_modules_object():
    # A module's own names (its classes' members, `self._x`) are its own; anything else with a leading
    # underscore belongs to another module, and is read through its public surface.
    offenders = [f"{p.relative_to(ROOT)}: {found}" for p in _sources(*PACKAGES)
                 if _module(p) not in TOUCHES_LIBRARY_INTERNALS
                 for found in [private_reaches(p.read_text(), _module(p))] if found]
    assert offenders == []


def test_no_test_benchmark_or_example_reaches_into_a_private_name():
    assert _offenders(tuple(f for f in WRITTEN if f not in PACKAGES),
                      lambda s, m: [] if m in TOUCHES_LIBRARY_INTERNALS else private_reaches(s, m)) == []


def test_imports_inside_functions_only_break_cycles_and_say_so():
    assert _offenders(PACKAGES, lambda s, m: function_imports(s)) == []


def test_no_kind_name_comparison_outside_the_strategies():
    offenders = [o for o in _offenders(PACKAGES, lambda s, m: kind_comparisons(s))
                 if not o.startswith(("runtime/server/kinds/", "runtime/server/rbac/"))]
    assert offenders == []


def _registry_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in _sources("runtime/server/registry"):
        module = _module(path)
        graph[module] = {n for n, _, _ in _imports(_parse(path), module)
                         if n.startswith("runtime.server.registry.") and n != module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt] if nxt in stack else [node, nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"
    for node in graph:
        if node not in state:
            visit(node, [node])
    return cycles


def test_the_registry_imports_one_way_without_cycles():
    graph = _registry_graph()
    assert _cycles(graph) == []
    assert graph["runtime.server.registry.answers"] == set()
    verbs = {"reads", "listing", "watching", "writes", "patching", "deletion", "reviews"}
    core_imports = {m.rsplit(".", 1)[1] for m in graph["runtime.server.registry.primitives"]}
    assert not core_imports & (verbs | {"registry"})
    for verb in verbs:
        assert "runtime.server.registry.registry" not in graph[f"runtime.server.registry.{verb}"], verb


def _too_long(source: str) -> bool:
    return len(source.splitlines()) > MAX_LINES and not source.startswith(GENERATED_MARKER)


def test_no_module_is_over_600_lines():
    assert [str(p.relative_to(ROOT)) for p in _sources(*WRITTEN) if _too_long(p.read_text())] == []


@pytest.mark.parametrize("init", [p for folder in PACKAGES for p in (ROOT / folder).rglob("__init__.py")],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_package_has_a_contract_docstring_and_exports(init: Path):
    module = importlib.import_module(_module(init))
    assert (module.__doc__ or "").strip(), f"{module.__name__} has no contract docstring"
    assert hasattr(module, "__all__"), f"{module.__name__} has no __all__"


#: The HTTP client loaded 121 project modules while the scheme imported every kind's strategy; a client-side
#: import may load a third of that (issue 36).
MAX_CLIENT_MODULES = 40
def test_the_footprint_rules_fail_on_a_planted_footprint():
    planted = ["runtime", "runtime.server", "runtime.server.kinds.crd", "celpy", "jwt.api_jwt", "apiary", "re2x",
               "runtime.client.http", "httpx", "api.app", "runtime.machinery.serializer.proto.core_v1_pb2"]
    assert server_code(planted) == ["runtime.server", "runtime.server.kinds.crd", "celpy", "jwt.api_jwt", "api.app"]
    assert project_modules(planted) == ["runtime", "runtime.server", "runtime.server.kinds.crd",
                                        "runtime.client.http", "api.app"]
    # The scheme's one late crossing is allowed inside a function only, and in that module only.
    machinery = LAYERS[("runtime/machinery", "runtime/models")]
    late = "def bind():\n    from runtime.server.kinds import STRATEGIES\n"
    assert layer_crossings(late, "runtime.machinery.scheme", machinery) == []
    assert layer_crossings("from runtime.server.kinds import NAMESPACE_FINALIZER\n" + late,
                           "runtime.machinery.scheme", machinery) == ["runtime.server.kinds", "runtime.server.kinds"]
    assert layer_crossings(late, "runtime.machinery.options", machinery) == ["runtime.server.kinds"]


def test_the_http_client_loads_no_server_code():
    loaded = loaded_by("runtime.client.http")
    assert server_code(loaded) == []
    assert len(project_modules(loaded)) <= MAX_CLIENT_MODULES, project_modules(loaded)


@pytest.mark.parametrize("module", ["runtime.controller.informer", "runtime.controller.manager",
                                    "runtime.controller.workqueue"])
def test_the_controller_runtime_loads_no_server_code(module: str):
    assert server_code(loaded_by(module)) == []
