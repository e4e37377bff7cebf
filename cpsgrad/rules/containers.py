"""Rules for containers as differentiable values: dict methods, and the functional forms of
`list.append` and `list.pop` that normalize writes for lists nothing else refers to.

Methods of dicts are bound like numpy arrays' methods: `d.values()` is the rule of `dict.values`
called as `(d)`. A dict's adjoint is a `cpsgrad_runtime.DictAdjoint` (one adjoint per key read).
"""

# Templates accumulate into adjoints (`x_d += ...`) that only the transform binds:
# ruff: noqa: F821, F841
from __future__ import annotations

from cpsgrad import runtime as cpsgrad_runtime
from cpsgrad.rules.registry import not_differentiable, rule


@rule(dict.values)
def dict_values(d):
    y = dict.values(d)
    y_d = yield y
    d_d += cpsgrad_runtime.values_adjoint(d, y_d)


@rule(dict.items)
def dict_items(d):
    y = dict.items(d)
    y_d = yield y
    d_d += cpsgrad_runtime.items_adjoint(d, y_d)


@rule(dict.keys)
def dict_keys(d):
    y = dict.keys(d)


@rule(dict.get)
def dict_get(d, key):
    y = dict.get(d, key)
    y_d = yield y
    d_d += cpsgrad_runtime.get_adjoint(d, key, y_d)


@rule(dict.get)
def dict_get_default(d, key, default):
    y = dict.get(d, key, default)
    y_d = yield y
    d_d += cpsgrad_runtime.get_adjoint(d, key, y_d)
    default_d += cpsgrad_runtime.get_default_adjoint(d, key, y_d)


@rule(cpsgrad_runtime.appended)
def appended(items, value):
    y = cpsgrad_runtime.appended(items, value)
    y_d = yield y
    items_d += cpsgrad_runtime.appended_adjoint(items, y_d)
    value_d += cpsgrad_runtime.item(y_d, len(items))


@rule(cpsgrad_runtime.removed)
def removed(items, index):
    y = cpsgrad_runtime.removed(items, index)
    y_d = yield y
    items_d += cpsgrad_runtime.removed_adjoint(items, index, y_d)


@rule(cpsgrad_runtime.construct)
def construct(kind, positional, keywords, names):
    y = cpsgrad_runtime.construct(kind, positional, keywords, names)
    y_d = yield y
    positional_d += cpsgrad_runtime.constructed_positional(kind, len(positional), y_d)
    keywords_d += cpsgrad_runtime.constructed_keywords(kind, names, y_d)


# ---- `+` and `*` on tuples and lists (runtime/sequences.py: what the operator did is read when it runs) ----


@rule(cpsgrad_runtime.concatenation)
def concatenation(x, y):
    z = cpsgrad_runtime.concatenation(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.summand_adjoint(z_d, x, y, False)
    y_d += cpsgrad_runtime.summand_adjoint(z_d, x, y, True)


@rule(cpsgrad_runtime.repetition)
def repetition(x, y):
    z = cpsgrad_runtime.repetition(x, y)
    z_d = yield z
    x_d += cpsgrad_runtime.factor_adjoint(z_d, x, y, False)
    y_d += cpsgrad_runtime.factor_adjoint(z_d, y, x, True)


@rule(cpsgrad_runtime.inserted_at)
def inserted_at(items, index, value):
    y = cpsgrad_runtime.inserted_at(items, index, value)
    y_d = yield y
    items_d += cpsgrad_runtime.inserted_at_adjoint(items, index, y_d)
    value_d += cpsgrad_runtime.inserted_value_adjoint(items, index, y_d)


@rule(cpsgrad_runtime.removed_value)
def removed_value(items, matched):
    y = cpsgrad_runtime.removed_value(items, matched)
    y_d = yield y
    items_d += cpsgrad_runtime.removed_value_adjoint(items, matched, y_d)


@rule(cpsgrad_runtime.reversed_list)
def reversed_list(items):
    y = cpsgrad_runtime.reversed_list(items)
    y_d = yield y
    items_d += cpsgrad_runtime.reverse(y_d)


@rule(cpsgrad_runtime.merged)
def merged(left, right):
    y = cpsgrad_runtime.merged(left, right)
    y_d = yield y
    left_d += cpsgrad_runtime.merged_adjoint(y_d, left, right, False)
    right_d += cpsgrad_runtime.merged_adjoint(y_d, left, right, True)


@rule(dict)
def dict_of(source):
    y = dict(source)
    y_d = yield y
    source_d += cpsgrad_runtime.dict_of_adjoint(source, y_d)


# ---- a name sharing a value that `x op= y` updated (transforms/analysis/aliasing.py) --------------------


not_differentiable(cpsgrad_runtime.check_augmented)


@rule(cpsgrad_runtime.in_place_operand)
def in_place_operand(target, value, operator, where="", in_place=False):
    y = cpsgrad_runtime.in_place_operand(target, value, operator, where, in_place)
    y_d = yield y
    value_d += cpsgrad_runtime.in_place_operand_adjoint(value, y, y_d)
    target_d += 0.0  # the target's value reaches the result through `x op y`'s own backward


@rule(cpsgrad_runtime.in_place_mapping)
def in_place_mapping(target, value, operator, where="", in_place=False):
    y = cpsgrad_runtime.in_place_mapping(target, value, operator, where, in_place)
    y_d = yield y
    value_d += cpsgrad_runtime.in_place_operand_adjoint(value, y, y_d)
    target_d += 0.0


@rule(cpsgrad_runtime.alias_after_update)
def alias_after_update(alias, target, where="", rewrite=""):
    y = cpsgrad_runtime.alias_after_update(alias, target, where, rewrite)
    y_d = yield y
    alias_d += cpsgrad_runtime.alias_adjoint(y_d, alias, target, False)
    target_d += cpsgrad_runtime.alias_adjoint(y_d, alias, target, True)


@rule(cpsgrad_runtime.view_after_write)
def view_after_write(view, base, key, where=""):
    y = cpsgrad_runtime.view_after_write(view, base, key, where)
    y_d = yield y
    view_d += cpsgrad_runtime.view_adjoint(y_d, view, base, key, y, False)
    base_d += cpsgrad_runtime.view_adjoint(y_d, view, base, key, y, True)


@rule(cpsgrad_runtime.checked_view)
def checked_view(view, base, key, where=""):
    y = cpsgrad_runtime.checked_view(view, base, key, where)
    y_d = yield y
    view_d += cpsgrad_runtime.view_adjoint(y_d, view, base, key, y, False)
    base_d += cpsgrad_runtime.view_adjoint(y_d, view, base, key, y, True)


@rule(cpsgrad_runtime.alias_after_write)
def alias_after_write(alias, target, where=""):
    y = cpsgrad_runtime.alias_after_write(alias, target, where)
    y_d = yield y
    alias_d += cpsgrad_runtime.alias_adjoint(y_d, alias, target, False)
    target_d += cpsgrad_runtime.alias_adjoint(y_d, alias, target, True)


# ---- unpacking with * (transforms/starred.py) ----------------------------------------------------


@rule(cpsgrad_runtime.joined)
def joined(parts):
    y = cpsgrad_runtime.joined(parts)
    y_d = yield y
    parts_d += cpsgrad_runtime.joined_adjoint(parts, y_d)


@rule(cpsgrad_runtime.joined_tuple)
def joined_tuple(parts):
    y = cpsgrad_runtime.joined_tuple(parts)
    y_d = yield y
    parts_d += cpsgrad_runtime.joined_adjoint(parts, y_d)


not_differentiable(cpsgrad_runtime.unpack_check)


# ---- comprehensions and the builtin higher-order functions (transforms/comprehensions.py) ------


@rule(cpsgrad_runtime.inserted)
def inserted(d, key, value):
    y = cpsgrad_runtime.inserted(d, key, value)
    y_d = yield y
    d_d += cpsgrad_runtime.inserted_adjoint(key, y_d)
    value_d += cpsgrad_runtime.entry(y_d, key)


@rule(sorted)
def sorted_(xs, *, key=None, reverse=False):
    y = sorted(xs, key=key, reverse=reverse)
    y_d = yield y
    xs_d += cpsgrad_runtime.sorted_adjoint(xs, key, reverse, y_d)


@rule(max)
def max_key(xs, *, key):
    y = max(xs, key=key)
    y_d = yield y
    xs_d += cpsgrad_runtime.chosen_adjoint(xs, key, max, y, y_d)


@rule(min)
def min_key(xs, *, key):
    y = min(xs, key=key)
    y_d = yield y
    xs_d += cpsgrad_runtime.chosen_adjoint(xs, key, min, y, y_d)


@rule(zip)
def zip_(xs, ys, *, strict=False):
    y = zip(xs, ys, strict=strict)
    y_d = yield y
    xs_d += cpsgrad_runtime.zipped_adjoint(xs, 0, y_d)
    ys_d += cpsgrad_runtime.zipped_adjoint(ys, 1, y_d)


@rule(zip)
def zip_three(xs, ys, zs, *, strict=False):
    y = zip(xs, ys, zs, strict=strict)
    y_d = yield y
    xs_d += cpsgrad_runtime.zipped_adjoint(xs, 0, y_d)
    ys_d += cpsgrad_runtime.zipped_adjoint(ys, 1, y_d)
    zs_d += cpsgrad_runtime.zipped_adjoint(zs, 2, y_d)


@rule(enumerate)
def enumerate_(xs, start=0):
    y = enumerate(xs, start)
    y_d = yield y
    xs_d += cpsgrad_runtime.enumerated_adjoint(y_d)
