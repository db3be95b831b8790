"""The label selector query syntax (apimachinery `labels.Parse`): a lexer and a recursive-descent parser.

Contract: `parse_label_selector(text)` returns the `ParsedLabelSelector` `text`
denotes, or raises `SelectorError` with Kubernetes' message. Grammar:
`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`,
comma = AND; whitespace between tokens is ignored; "" selects everything.
Keys are validated while parsing (`<nil>: Invalid value: ...`), values by the
`Requirement` built from them.

Value sets keep apimachinery's treatment of empty entries: `()` is the set of
the empty string, and a leading, doubled or trailing comma adds "" (`(,a)`,
`(a,,b)`, `(a,)`); a doubled comma right before `)` (`(a,,)`) is an error,
as in Kubernetes.

Pure: no I/O.

Internal to `runtime.machinery.selectors`: imported by its modules only.
"""

from __future__ import annotations

import enum

from runtime.machinery.selectors.labels import ParsedLabelSelector, Requirement
from runtime.machinery.selectors.selection import (
    BINARY_OPERATORS, SET_OPERATORS, Operator, SelectorError, invalid_message,
)
from runtime.machinery.validation.labels import label_key_errors

__all__ = ["parse_label_selector", "lex", "Token", "Lexeme"]

_WHITESPACE = " \t\r\n"
_SPECIAL = "=!(),><"


class Token(enum.Enum):
    """Lexer tokens other than operators (operators lex to their `Operator`); apimachinery's `Token`."""

    ID = "identifier"
    EOS = "end of string"
    OPEN = "("
    CLOSE = ")"
    COMMA = ","
    NOT = "!"


_ID, _EOS, _OPEN, _CLOSE, _COMMA, _NOT = Token.ID, Token.EOS, Token.OPEN, Token.CLOSE, Token.COMMA, Token.NOT
#: What the lexer yields: a token or an operator.
Lexeme = Token | Operator
_SYMBOL_TOKENS: dict[str, Lexeme] = {
    "(": _OPEN, ")": _CLOSE, ",": _COMMA, "!": _NOT,
    "=": Operator.EQUALS, "==": Operator.DOUBLE_EQUALS, "!=": Operator.NOT_EQUALS,
    ">": Operator.GREATER_THAN, "<": Operator.LESS_THAN,
}
_KEYWORDS = {"in": Operator.IN, "notin": Operator.NOT_IN}


def lex(text: str) -> list[tuple[Lexeme, str]]:
    """Splits `text` into (token, literal) pairs ending with an end-of-string token (apimachinery's `Lexer`)."""
    tokens: list[tuple[Lexeme, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            tokens.append((_EOS, ""))
            return tokens
        if text[pos] in _SPECIAL:
            # Longest symbol wins: "!=" and "==" over "!" and "=".
            lit = text[pos:pos + 2] if text[pos:pos + 2] in _SYMBOL_TOKENS else text[pos]
            tokens.append((_SYMBOL_TOKENS[lit], lit))
            pos += len(lit)
            continue
        start = pos
        while pos < n and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            pos += 1
        lit = text[start:pos]
        tokens.append((_KEYWORDS.get(lit, _ID), lit))


class _LabelParser:
    """Recursive descent over the tokens, as apimachinery's `Parser`.

    `in` and `notin` are operators only right after a key; elsewhere ("values
    context") they are plain identifiers, so `in in (in)` is valid.
    """

    def __init__(self, text: str) -> None:
        self.tokens = lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[Lexeme, str]:
        tok, lit = self.tokens[min(self.pos, len(self.tokens) - 1)]
        return (_ID if values and tok in SET_OPERATORS else tok), lit

    def take(self, values: bool = True) -> tuple[Lexeme, str]:
        item = self.peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.peek()
            if tok is _EOS:
                return reqs
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except SelectorError as e:
                raise SelectorError(f"unable to parse requirement: {e}") from None
            tok, lit = self.take()
            if tok is _EOS:
                return reqs
            if tok is not _COMMA:
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.peek()
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        negated = self.peek()[0] is _NOT
        if negated:
            self.take()
        tok, key = self.take()
        if tok is not _ID:
            raise SelectorError(f"found '{key}', expected: identifier")
        if errs := label_key_errors(key):
            raise SelectorError(invalid_message("<nil>", key, "; ".join(errs)))
        if negated:
            return Requirement(key, Operator.DOES_NOT_EXIST)
        if self.peek()[0] in (_EOS, _COMMA):
            return Requirement(key, Operator.EXISTS)
        op, lit = self.take(values=False)
        if op not in BINARY_OPERATORS:
            expected = ", ".join(o.value for o in BINARY_OPERATORS)
            raise SelectorError(f"found '{lit}', expected: {expected}")
        values = self.value_set() if op in SET_OPERATORS else self.exact_value()
        return Requirement(key, op, tuple(sorted(values)))

    def value_set(self) -> set[str]:
        tok, lit = self.take()
        if tok is not _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok is _CLOSE:  # "()" is the set of the empty string
            self.take()
            return {""}
        if tok not in (_ID, _COMMA):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok is _ID:
                values.add(lit)
                nxt, nlit = self.peek()
                if nxt is _CLOSE:
                    self.take()
                    return values
                if nxt is not _COMMA:
                    raise SelectorError(f"found '{nlit}', expected: ',' or ')'")
            elif tok is _COMMA:  # a leading, doubled or trailing comma adds ""
                if not values:
                    values.add("")
                nxt, _ = self.peek()
                if nxt is _CLOSE:
                    values.add("")
                    self.take()
                    return values
                if nxt is _COMMA:
                    self.take()
                    values.add("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_EOS, _COMMA):  # "a=" pins the empty value
            return {""}
        tok, lit = self.take()
        if tok is not _ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        return {lit}


def parse_label_selector(text: str) -> ParsedLabelSelector:
    """Returns the selector `text` denotes (`labels.Parse`); "" selects everything.

    Raises SelectorError on bad syntax, keys or values, with Kubernetes' message.
    """
    return ParsedLabelSelector(tuple(_LabelParser(text).parse()))

