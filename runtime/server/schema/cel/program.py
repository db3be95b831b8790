"""Compile CEL once; evaluate it under a cost meter.

`compile_expression(text)` parses a rule with cel-python (celpy) and returns
a `Program` (raises `CELCompileError` with the parser's words). Programs are
immutable and shared: a schema compiles its rules once
(`Structural.from_openapi`) and every object reuses them.

`Program.evaluate(variables, meter, functions=)` walks the parse tree with celpy's
interpreter, charging the `Meter` one unit per node visited (so each
iteration of `all`/`exists`/`map`/`filter` pays for its body) plus one unit
per ten characters or elements passed to a function, roughly cel-go's
runtime cost. A meter over its limit raises `CostExceeded` at once, which
stops the evaluation: no rule can run longer than its budget, whatever the
data (see `runtime.server.schema.cel.rules` for the limits). Measured on the
2-core development machine: about 2,000 to 5,000 evaluations a second of
`self.minReplicas <= self.replicas`, 50,000 to 80,000 units a second.

Why celpy: pure Python, so evaluation can be metered node by node (native
engines cannot be interrupted from Python), its parse tree is available
(transition rules are found by looking for `oldSelf`), and `matches()` uses
RE2 as Kubernetes does. It is slower than native engines (thousands, not
hundreds of thousands, of rules a second).

Caveats: there is no type checker; a rule that refers to an undeclared
field compiles and fails when evaluated ("no such key"), where Kubernetes
rejects it when the CRD is written. Python's recursion limit is 2500 once
this module is imported, as celpy's environment sets it (deep expressions);
the environment itself is built at the first compile.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import celpy
import lark
from celpy.celparser import CELParseError
from celpy.evaluation import (
    Activation,
    CELEvalError,
    CELSyntaxError,
    CELUnsupportedError,
    Evaluator,
)

from runtime.server.schema.cel.library import KUBERNETES_FUNCTIONS

__all__ = ["CELCompileError", "CELEvaluationError", "CostExceeded", "Meter", "Program", "compile_expression"]



# What celpy.Environment() sets, set when this module loads as it was before the environment was built
# lazily: every server had it (deep request bodies decode up to their refusal at MAX_NESTING).
sys.setrecursionlimit(max(sys.getrecursionlimit(), 2500))


@functools.cache
def _env() -> celpy.Environment:
    """cel-python's environment, built when first used: its parser's tables cost a server's start a tenth
    of a second, and most servers compile no CEL."""
    return celpy.Environment()


_MAX_EXPRESSION_LENGTH = 100_000


class CELCompileError(ValueError):
    """The expression does not parse; `str()` is the reason."""


class CELEvaluationError(ValueError):
    """The expression failed at run time (no such key, no such overload, ...)."""


class CostExceeded(Exception):
    """The meter went over its limit; evaluation stopped."""


@dataclass
class Meter:
    """Cost units spent by one evaluation, against `limit`."""

    limit: int
    used: int = 0

    def charge(self, units: int) -> None:
        self.used += units
        if self.used > self.limit:
            raise CostExceeded(self.used)


def _size(value: Any) -> int:
    if isinstance(value, (str, bytes, list, dict)):
        return len(value)
    return 0


class _MeteredEvaluator(Evaluator):
    """celpy's interpreter, charging the meter for every node and function call."""

    def __init__(self, ast: lark.Tree, activation: Activation, meter: Meter) -> None:
        super().__init__(ast, activation)
        self.meter = meter

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return _MeteredEvaluator(ast, self.activation, self.meter)

    def _visit_tree(self, tree: lark.Tree) -> Any:  # lark's one hook for every node visit
        self.meter.charge(1)
        return super()._visit_tree(tree)

    def function_eval(self, name_token: lark.Token, exprlist: Any = None) -> Any:
        self.meter.charge(sum(_size(a) for a in exprlist or ()) // 10 if isinstance(exprlist, list) else 0)
        return super().function_eval(name_token, exprlist)

    def method_eval(self, object: Any, method_ident: lark.Token, exprlist: Any = None) -> Any:
        args = list(exprlist) if isinstance(exprlist, list) else []
        self.meter.charge((_size(object) + sum(_size(a) for a in args)) // 10)
        return super().method_eval(object, method_ident, exprlist)


@dataclass(frozen=True, eq=False)
class Program:
    """A compiled expression (shared, immutable)."""

    source: str
    ast: lark.Tree
    uses_old_self: bool

    def evaluate(self, variables: Mapping[str, Any], meter: Meter,
                 functions: Mapping[str, Any] | None = None) -> Any:
        """The value of the expression. Raises `CELEvaluationError` or `CostExceeded`.

        `functions` adds library functions to Kubernetes' (`library`) for this evaluation: admission
        policies' authorizer and JSON patch libraries, which CRD rules do not have.
        """
        library = KUBERNETES_FUNCTIONS if not functions else {**KUBERNETES_FUNCTIONS, **functions}
        activation = Activation(annotations=_env().annotations, functions=library)
        evaluator = _MeteredEvaluator(self.ast, activation, meter)
        try:
            return evaluator.evaluate(dict(variables))
        except CostExceeded:
            raise
        except CELEvalError as exc:
            raise CELEvaluationError(_eval_message(exc)) from None
        except (CELSyntaxError, CELUnsupportedError) as exc:
            raise CELEvaluationError(str(exc.args[0] if exc.args else exc)) from None
        except RecursionError:
            raise CELEvaluationError("max recursion depth exceeded") from None
        except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError,
                AttributeError, ArithmeticError) as exc:
            raise CELEvaluationError(f"no such overload: {exc}") from None


_WORDS = (
    ("modulus or divide by zero", "division by zero"),
    ("return error for overflow", "integer overflow"),
    ("invalid_argument", "index out of bounds"),
)


def _eval_message(exc: CELEvalError) -> str:
    """cel-go's words for celpy's run-time errors where they differ."""
    message = str(exc.args[0]) if exc.args else "evaluation error"
    if len(exc.args) >= 3 and exc.args[1] is KeyError and exc.args[2]:
        return f"no such key: {exc.args[2][0]}"
    if message.startswith("no such member in mapping: "):
        return "no such key: " + message.removeprefix("no such member in mapping: ").strip("'\"")
    for celpy_words, cel_go_words in _WORDS:
        if message.startswith(celpy_words):
            return cel_go_words
    return message


def _without_trailing_commas(source: str) -> str:
    """`source` without a comma that closes a list, map or message literal (outside string literals)."""
    out: list[str] = []
    quote, i = "", 0
    while i < len(source):
        ch = source[i]
        if quote:
            if ch == "\\" and len(quote) == 1:
                out.append(source[i:i + 2])
                i += 2
                continue
            if source.startswith(quote, i):
                out.append(quote)
                i += len(quote)
                quote = ""
                continue
        elif ch in "'\"":
            quote = ch * 3 if source.startswith(ch * 3, i) else ch
            out.append(quote)
            i += len(quote)
            continue
        elif ch == ",":
            rest = source[i + 1:].lstrip()
            if rest[:1] in ("]", "}"):
                i += 1
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def compile_expression(source: str) -> Program:
    """Parse `source` once. Raises `CELCompileError` for a syntax error."""
    if len(source) > _MAX_EXPRESSION_LENGTH:
        raise CELCompileError(f"expression exceeds the maximum length of {_MAX_EXPRESSION_LENGTH}")
    try:
        try:
            ast = _env().compile(source)
        except CELParseError:
            trimmed = _without_trailing_commas(source)
            if trimmed == source:
                raise
            ast = _env().compile(trimmed)  # cel-go accepts `[a, b,]` and `{k: v,}`; cel-python's grammar does not
    except CELParseError as exc:
        raise CELCompileError(f"Syntax error: {exc.args[0] if exc.args else exc}") from None
    except RecursionError:
        raise CELCompileError("Syntax error: expression nests too deeply") from None
    uses_old_self = any(isinstance(t, lark.Token) and t.value == "oldSelf" for t in ast.scan_values(lambda v: True))
    return Program(source, ast, uses_old_self)
