"""The Python operator functions that core-language operators stand for in the rule table."""

import operator

import libcst as cst

_BINARY = {
    cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
    cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod,
    cst.Power: operator.pow, cst.MatrixMultiply: operator.matmul,
}
_UNARY = {cst.Minus: operator.neg, cst.Plus: operator.pos, cst.Not: operator.not_}


def binary_primitive(node: cst.BaseBinaryOp):
    return _BINARY[type(node)]


def unary_primitive(node: cst.BaseUnaryOp):
    return _UNARY[type(node)]
