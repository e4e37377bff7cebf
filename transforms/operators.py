"""The Python operator functions that core-language operators stand for in the rule table."""

import operator

import libcst as cst

_BINARY = {
    cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
    cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod,
    cst.Power: operator.pow, cst.MatrixMultiply: operator.matmul, cst.BitAnd: operator.and_,
    cst.BitOr: operator.or_, cst.BitXor: operator.xor, cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
}
_UNARY = {cst.Minus: operator.neg, cst.Plus: operator.pos, cst.Not: operator.not_, cst.BitInvert: operator.invert}


def binary_primitive(node: cst.BaseBinaryOp):
    return _BINARY[type(node)]


def unary_primitive(node: cst.BaseUnaryOp):
    return _UNARY[type(node)]
