"""What derivative programs call: `cpsgrad_runtime.X` in generated code is this package.

The derivative program a transform writes receives this package as its `cpsgrad_runtime`
parameter and calls the helpers below by name; rule templates (cpsgrad/rules/) read them the
same way. Each concern is a module of its own, and nothing here imports `cpsgrad.transforms` or
`cpsgrad.rules`:

- `adjoints`: the adjoint containers (`SequenceAdjoint`, `DictAdjoint`), the symbolic zero test,
  one-hot adjoints of an element;
- `accumulation`: adding a contribution into an adjoint, in place where nothing else holds it;
- `books` (the state: loan books per thread and run) and `loans`: adjoints lent to callees;
- `broadcasting`: `unbroadcast` and `reduced_product`, which undo numpy's broadcasting, and
  `refuse_complex_operands`, the guard of rules without complex support;
- `elementwise` (division with IEEE results: `quotient`, `divide`), `reductions` (the fused
  softmax and log-sum-exp backwards), `linalg` (`matmul_left`/`matmul_right`, which
  `accumulate_matmul_left` fuses), `indexing` (subscripts): what generated code and several
  rules share. A helper that serves only rules sits beside its templates in cpsgrad/rules/;
- `containers`, `comprehensions`, `closures`: tuples, lists, dicts, records; the builtin
  higher-order functions; nested functions, lambdas and partials;
- `writes`: `x[i] = v` (`written`) and its backward (save, restore, the adjoints);
- `bitwise`: the backward of `|`, `&`, `^`, `<<`, `>>`, `~` (a dict merge, constants, or refused);
- `checks`: unbound variables, in-place refusals, user rules' checked contributions;
- `device`: the `DeviceArray` branches of the array helpers;
- `dispatch`: the call sites of user functions (each picks and runs the callee's program);
- `tangents`: forward mode's zero tangents and tangents fitted to their primal's shape.

The names below are the whole interface generated code may use; `builtins` is here for code
that calls a builtin the user's function shadows.
"""

import builtins  # noqa: F401  (generated code reads builtins here when the user shadows them)

import numpy  # noqa: F401  (code normalize adds reads numpy here: x.sort() -> cpsgrad_runtime.numpy.sort(x))

from cpsgrad.runtime.accumulation import accumulate, accumulate_index, accumulate_matmul_left
from cpsgrad.runtime.adjoints import (
    DictAdjoint,
    SequenceAdjoint,
    display_entry,
    entry,
    is_zero,
    item,
    item_list,
    one_hot,
    repeated,
    reverse,
    unpacked,
)
from cpsgrad.runtime.attribute_changes import attribute_list
from cpsgrad.runtime.augmented import in_place_mapping, in_place_operand, in_place_operand_adjoint
from cpsgrad.runtime.bitwise import bitwise_adjoint, inverted_adjoint
from cpsgrad.runtime.books import clear_loans, close_loans, open_loans
from cpsgrad.runtime.broadcasting import reduced_product, refuse_complex_operands, unbroadcast
from cpsgrad.runtime.checks import (
    Unbound,
    check_augmented,
    check_bound,
    check_in_place,
    refuse_in_place,
    rule_adjoint,
    rule_contribution,
    rule_failed,
    unbound,
    unbound_read,
)
from cpsgrad.runtime.closures import make_function, make_partial
from cpsgrad.runtime.comprehensions import (
    chosen_adjoint,
    enumerated_adjoint,
    inserted,
    inserted_adjoint,
    sorted_adjoint,
    zipped_adjoint,
)
from cpsgrad.runtime.container_methods import (  # dict and list methods, del x[key] (issue 15)
    with_default,
    with_default_adjoint,
    with_default_value_adjoint,
    without_item,
    without_item_adjoint,
    without_key,
)
from cpsgrad.runtime.containers import (
    appended,
    appended_adjoint,
    as_sequence,
    attribute_adjoint,
    construct,
    constructed_keywords,
    constructed_positional,
    distance_adjoint,
    get_adjoint,
    get_default_adjoint,
    items_adjoint,
    product_adjoint,
    removed,
    removed_adjoint,
    sequence_adjoint,
    split_ties,
    values_adjoint,
    zip_length,
)
from cpsgrad.runtime.effects import frozen, observed
from cpsgrad.runtime.elementwise import array_divide, divide, quotient
from cpsgrad.runtime.exceptions import caught, enter, entering, exit_of, exit_with, matches
from cpsgrad.runtime.generators import generator_fold
from cpsgrad.runtime.indexing import (
    index_adjoint,
    index_concatenate,
    index_concatenate_adjoint,
    indexed,
    item_adjoint,
    subscript_of,
)
from cpsgrad.runtime.keyed_writes import diagonal_key, place_key, put_key, putmask_key, ufunc_at
from cpsgrad.runtime.linalg import matmul_left, matmul_right
from cpsgrad.runtime.list_changes import (  # in-place append/pop of an owned list (issue 15)
    ListAdjoint,
    append_in_place,
    extend_in_place,
    extended,
    extending,
    last_adjoint,
    popped_adjoint,
    popping,
    reinserted_adjoint,
    remove_in_place,
    settled,
    tail_adjoint,
    truncated_adjoint,
    unappend,
    unextend,
    unremove,
)
from cpsgrad.runtime.loans import (
    borrow,
    claim,
    lend,
    merge,
    pass_on,
    release,
    void_offers,
    withdrawing,
)
from cpsgrad.runtime.objects import (
    attribute_escapes,
    new_object,
    overwritten_attribute,
    owned,
    restore_attribute,
    set_attribute,
    unseen_attribute,
    unseen_objects,
)
from cpsgrad.runtime.reductions import (
    logsumexp_adjoint,
    picked_log_softmax_adjoint,
    softmax_adjoint,
)
from cpsgrad.runtime.sequences import (
    concatenation,
    dict_of_adjoint,
    factor_adjoint,
    inserted_at,
    inserted_at_adjoint,
    inserted_value_adjoint,
    merged,
    merged_adjoint,
    removed_value,
    removed_value_adjoint,
    repetition,
    reversed_list,
    summand_adjoint,
)
from cpsgrad.runtime.starred import joined, joined_adjoint, joined_tuple, spread, unpack_check
from cpsgrad.runtime.tangents import broadcast_like, fitted, fresh, zero_tangent
from cpsgrad.runtime.writes import (
    alias_adjoint,
    alias_after_update,
    alias_after_write,
    checked_view,
    close_writes,
    copied_into,
    keep_final_writes,
    open_writes,
    overwritten,
    overwritten_adjoint,
    overwritten_update,
    restore,
    restore_update,
    update_adjoint,
    updated,
    view_adjoint,
    view_after_write,
    written,
    written_adjoint,
)

__all__ = [
    "alias_adjoint",
    "alias_after_update",
    "check_augmented",
    "in_place_mapping",
    "in_place_operand",
    "in_place_operand_adjoint",
    "alias_after_write",
    "builtins",
    "checked_view",
    "view_adjoint",
    "view_after_write",
    "new_object",
    "attribute_escapes",
    "attribute_list",
    "overwritten_attribute",
    "owned",
    "restore_attribute",
    "set_attribute",
    "unseen_attribute",
    "unseen_objects",
    "accumulate",
    "accumulate_index",
    "accumulate_matmul_left",
    "bitwise_adjoint",
    "inverted_adjoint",
    "appended",
    "appended_adjoint",
    "array_divide",
    "as_sequence",
    "attribute_adjoint",
    "borrow",
    "caught",
    "check_bound",
    "check_in_place",
    "chosen_adjoint",
    "claim",
    "clear_loans",
    "close_loans",
    "close_writes",
    "concatenation",
    "construct",
    "constructed_keywords",
    "constructed_positional",
    "copied_into",
    "dict_of_adjoint",
    "DictAdjoint",
    "display_entry",
    "distance_adjoint",
    "divide",
    "enter",
    "entering",
    "entry",
    "enumerated_adjoint",
    "exit_of",
    "exit_with",
    "factor_adjoint",
    "frozen",
    "observed",
    "get_adjoint",
    "get_default_adjoint",
    "index_adjoint",
    "index_concatenate",
    "index_concatenate_adjoint",
    "indexed",
    "inserted",
    "inserted_adjoint",
    "inserted_at",
    "inserted_at_adjoint",
    "inserted_value_adjoint",
    "is_zero",
    "item",
    "item_adjoint",
    "item_list",
    "items_adjoint",
    "joined",
    "joined_adjoint",
    "joined_tuple",
    "keep_final_writes",
    "lend",
    "logsumexp_adjoint",
    "make_function",
    "generator_fold",
    "make_partial",
    "matches",
    "matmul_left",
    "matmul_right",
    "merge",
    "merged",
    "merged_adjoint",
    "one_hot",
    "open_loans",
    "open_writes",
    "overwritten",
    "overwritten_adjoint",
    "overwritten_update",
    "pass_on",
    "picked_log_softmax_adjoint",
    "product_adjoint",
    "quotient",
    "reduced_product",
    "refuse_in_place",
    "release",
    "removed",
    "removed_adjoint",
    "removed_value",
    "removed_value_adjoint",
    "repeated",
    "repetition",
    "restore",
    "restore_update",
    "reverse",
    "reversed_list",
    "rule_adjoint",
    "rule_contribution",
    "rule_failed",
    "sequence_adjoint",
    "SequenceAdjoint",
    "softmax_adjoint",
    "sorted_adjoint",
    "split_ties",
    "spread",
    "subscript_of",
    "summand_adjoint",
    "unbound",
    "Unbound",
    "unbound_read",
    "refuse_complex_operands",
    "unbroadcast",
    "unpack_check",
    "unpacked",
    "update_adjoint",
    "updated",
    "values_adjoint",
    "void_offers",
    "withdrawing",
    "written",
    "written_adjoint",
    "ufunc_at",  # keyed writes: np.add.at, np.put, np.putmask, np.place, np.fill_diagonal
    "put_key",
    "putmask_key",
    "place_key",
    "diagonal_key",
    "zip_length",
    "zipped_adjoint",
]
__all__ += [  # runtime/list_changes.py, runtime/container_methods.py
    "with_default",
    "with_default_adjoint",
    "with_default_value_adjoint",
    "without_item",
    "without_item_adjoint",
    "without_key",
    "ListAdjoint",
    "append_in_place",
    "extend_in_place",
    "extended",
    "extending",
    "last_adjoint",
    "popped_adjoint",
    "popping",
    "reinserted_adjoint",
    "remove_in_place",
    "settled",
    "tail_adjoint",
    "truncated_adjoint",
    "unappend",
    "unextend",
    "unremove",
    "fitted",
    "fresh",
    "broadcast_like",
    "zero_tangent",
]
