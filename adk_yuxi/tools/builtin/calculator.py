"""Exact arithmetic for the model, without `eval`.

Models are bad at arithmetic and `eval` is unsafe, so expressions are parsed with `ast`
and only numbers, parentheses and arithmetic operators are evaluated, with bounds that
keep a hostile expression from exhausting the process.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from .._registry import tool

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 10**100


class _Rejected(ValueError):
    pass


def _evaluate(node: ast.AST) -> int | float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value: int | float = node.value  # type: ignore[assignment]
        return value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise _Rejected(f"exponents are limited to {MAX_EXPONENT}")
        result = _BINARY[type(node.op)](left, right)
        if abs(result) > MAX_MAGNITUDE:
            raise _Rejected("the result is too large")
        return result
    raise _Rejected(f"only numbers and + - * / // % ** ( ) are allowed, not {type(node).__name__}")


def _invalid(message: str) -> dict[str, Any]:
    return {"error": {"code": "invalid_expression", "message": message}}


@tool(category="builtin", tags=["math"], display_name="Calculator")
def calculate(expression: Annotated[str, Field(min_length=1, max_length=500)]) -> dict[str, Any]:
    """Evaluates an arithmetic expression exactly, e.g. "12 * (3 + 4) / 2"."""
    try:
        value = _evaluate(ast.parse(expression.strip(), mode="eval"))
    except SyntaxError:
        return _invalid("not a valid expression")
    except ZeroDivisionError:
        return _invalid("division by zero")
    except OverflowError:
        return _invalid("the result is too large")
    except _Rejected as exc:
        return _invalid(str(exc))
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return {"expression": expression.strip(), "value": value}
