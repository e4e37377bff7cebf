"""A generator object kept in a variable and consumed later in the same block, as one loop over the
generator whose body is a state machine (before transforms/generators.py rewrites that loop into a
call of the generator's fold):

    g = gen(xs, w)                    g_1 = xs                       (the arguments, evaluated here)
    first = next(g)                   next_1 = None; found = False; g_phase = 1
    LOG.append("between")             for g_item in gen(g_1, w):
    for v in g:                           if g_phase == 1:                   (first = next(g))
        if v > 3.0:                           next_1 = g_item; found = True
            break                             g_phase = 2                    (its break, and then:)
        s = s + v                             first = next_1
    rest                                      LOG.append("between")
                                              continue
                                          elif g_phase == 2:                 (for v in g)
                                              v = g_item
                                              if v > 3.0:
                                                  g_phase = 3
                                                  break                      (the last: the generator stops)
                                              s = s + v
                                      if g_phase == 1:                       (it ended before a value came)
                                          if not found: raise StopIteration
                                          ...
                                      elif g_phase == 3: pass
                                      rest

Each consumer (`next(g)`, `next(g, d)`, `for T in g`, `sum(g)`, `list(g)`, ...: generator_consumers.py
writes each as a loop) is a phase; the code between two consumers runs in the body when the first one
ends (its `break`), so before the generator resumes, as in Python; a phase whose loop the generator
ended runs, after the loop, what Python runs with the generator exhausted (each later consumer's `else`
and end). The generator object never exists, so it cannot escape: any other use of the variable
(returned, stored, passed on, consumed in a branch or a loop, rebound) is refused, located, with the
rewrite.
"""

from __future__ import annotations

import collections
import dataclasses

import libcst as cst
from libcst.metadata import CodeRange

from cpsgrad.transforms import generator_consumers, naming, syntax
from cpsgrad.transforms import generator_scopes as scopes

_ADVICE = (
    "consume a generator kept in a variable only by statements of the block it is made in, after it: "
    "`v = next(g)`, `v = next(g, default)`, `for v in g: ...`, `s = sum(g)`, `ys = list(g)` (no `break` or "
    "`continue` of an enclosing loop between them); or iterate the call where it is made"
)


@dataclasses.dataclass
class _Consumer:
    statement: cst.BaseStatement
    target: cst.BaseExpression
    body: list
    orelse: list
    after: list


def rewrite(consumers, read):
    """`read` with each kept generator object rewritten (or `read` itself where there is none)."""
    moved: dict = {}
    rewriter = _Blocks(consumers, read, moved)
    definition = read.definition.visit(rewriter)
    if not rewriter.done:
        return read
    positions = collections.ChainMap(moved, read.positions)
    return dataclasses.replace(read, definition=definition, positions=positions)


class _Blocks(scopes.Preserving):
    def __init__(self, consumers, read, moved: dict):
        super().__init__(read.positions, moved)
        self.consumers = consumers
        self.read = read
        self.done = False
        self.depth = 0

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def leave_IndentedBlock(self, original, updated):
        body = list(updated.body)
        rebuilt = self._block(body)
        return updated if rebuilt == body else updated.with_changes(body=rebuilt)

    def _block(self, body: list) -> list:
        for index, statement in enumerate(body):
            name = self._kept(statement)
            if name is not None:
                self.done = True
                return body[:index] + self._phases(name, statement, body[index + 1 :])
        return body

    def _kept(self, statement) -> str | None:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            return None
        small = statement.body[0]
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
            return None
        target = small.targets[0].target
        value = syntax.strip_parentheses(small.value)
        if isinstance(target, cst.Name) and self.consumers.generator(value) is not None:
            return target.value
        return None

    def reject(self, node, construct: str, advice: str = _ADVICE):
        self.consumers.reject(node, construct, advice)

    # ---- the rewrite of one kept generator ---------------------------------------------------------
    def _phases(self, name: str, made: cst.SimpleStatementLine, rest: list) -> list:
        call = syntax.strip_parentheses(made.body[0].value)
        fresh = self.consumers.fresh
        consumers, between = [], [[]]
        rest = [s for statement in rest for s in self._returned(name, statement)]
        for statement in rest:
            consumer = self._consumer(name, statement)
            if consumer is not None:
                consumers.append(consumer)
                between.append([])
            else:
                between[-1].append(statement)
        self._check_uses(name, made, rest, consumers)
        arguments, out = [], []
        for argument in call.args:
            if argument.star:
                self.reject(argument, "generator kept in a variable, called with * or **")
            value = argument.value
            if not (
                syntax.is_constant(value) or isinstance(value, cst.Name) and value.value in self.consumers.parameters
            ):
                temporary = fresh(naming.generator_part(name, "argument"))
                out.append(_assign(temporary, value))
                value = cst.Name(temporary)
            arguments.append(argument.with_changes(value=value))
        if not consumers:
            return out + rest
        before_first = between[0]
        gaps = between[1:]  # gaps[i]: the code after consumer i
        phase, item = fresh(naming.generator_part(name, "phase")), fresh(naming.generator_part(name, "item"))
        built = [self._built(c, name, item, fresh) for c in consumers]
        out += before_first
        for before, _ in built:
            out += before
        out.append(syntax.line(f"{phase} = 1"))
        branches = []
        count = len(built)
        for i, (_, consumer) in enumerate(built, 1):
            for statement in gaps[i - 1] if i < count else []:
                for jump in _jumps(statement):
                    self.reject(jump, f"{type(jump).__name__.lower()} between the consumers of a kept generator")
            if i < count:
                leaving = [syntax.line(f"{phase} = {i + 1}"), *consumer.after, *gaps[i - 1], syntax.line("continue")]
            else:
                leaving = [syntax.line(f"{phase} = {i + 1}"), syntax.line("break")]
            body = []
            if consumer.target is not None:
                body.append(syntax.line("TARGET = ITEM", TARGET=consumer.target, ITEM=cst.Name(item)))
            for statement in _blocks_indented(consumer.body):
                visited = statement.visit(_Breaks(leaving))
                body += list(visited.nodes) if isinstance(visited, cst.FlattenSentinel) else [visited]
            branches.append((cst.parse_expression(f"{phase} == {i}"), body))
        chain = _chain(branches)
        loop = cst.For(cst.Name(item), call.with_changes(args=arguments), cst.IndentedBlock([chain]))
        where = self.read.positions.get(consumers[0].statement)
        if where is not None:
            self.moved[loop] = CodeRange(where.start, where.start)
        out.append(loop)
        tails = []
        for p in range(1, count + 2):
            tail = []
            for i in range(p, count + 1):
                consumer = built[i - 1][1]
                tail += [*consumer.orelse, *consumer.after, *(gaps[i - 1] if i < count else [])]
            if p == count + 1:
                tail = list(built[-1][1].after)
            branches_tail = tail or [cst.SimpleStatementLine([cst.Pass()])]
            tails.append((cst.parse_expression(f"{phase} == {p}"), branches_tail))
        out.append(_chain(tails))
        return out + self._block(gaps[-1])

    def _returned(self, name: str, statement) -> list:
        """`return sum(g)` as `sum_g = sum(g)` and `return sum_g` (positions kept)."""
        small = (
            statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        )
        if not isinstance(small, cst.Return) or not isinstance(small.value, cst.Call):
            return [statement]
        value = small.value
        if not (value.args and _is(value.args[0].value, name) and self.consumers.consumer_form_of(value)):
            return [statement]
        result = self.consumers.fresh(naming.generator_part(self.consumers.consumer_form_of(value), name))
        assigned = _assign(result, value)
        returned = statement.with_changes(body=[small.with_changes(value=cst.Name(result))])
        if statement in self.read.positions:
            self.moved[assigned] = self.moved[returned] = self.read.positions[statement]
        return [assigned, returned]

    def _consumer(self, name: str, statement) -> _Consumer | None:
        if isinstance(statement, cst.For) and _is(statement.iter, name):
            orelse = list(statement.orelse.body.body) if statement.orelse is not None else []
            return _Consumer(
                statement,
                statement.target,
                list(statement.body.body)
                if isinstance(statement.body, cst.IndentedBlock)
                else [cst.SimpleStatementLine(statement.body.body)],
                orelse,
                [],
            )
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            return None
        small = statement.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        if isinstance(small, cst.Assign) and (
            len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name)
        ):
            return None
        if not (isinstance(value, cst.Call) and value.args and _is(value.args[0].value, name)):
            return None
        form = self.consumers.consumer_form_of(value)
        if form is None or value.args[0].keyword or value.args[0].star:
            return None
        return _Consumer(statement, None, [], [], [])

    def _built(self, consumer: _Consumer, name: str, item: str, fresh):
        """(before, consumer as a loop) of one consumer statement."""
        statement = consumer.statement
        if isinstance(statement, cst.For):
            return [], consumer
        small = statement.body[0]
        value = small.value
        form = self.consumers.consumer_form_of(value)
        accumulator = fresh(naming.accumulator(form))
        before, step, after, _ = generator_consumers.loop_parts(
            form,
            value,
            accumulator,
            item,
            fresh,
            self.consumers.parameters.__contains__,
            lambda node, construct, advice: self.reject(value, construct, advice),
        )
        if isinstance(small, cst.Assign):
            after = [*after, _assign_to(small.targets[0].target, accumulator)]
        return before, _Consumer(statement, None, step, [], after)  # the step reads the item itself

    def _check_uses(self, name: str, made, rest: list, consumers: list) -> None:
        """Refuse any use of `name` but its binding `made` and the consumers (each names it once)."""
        allowed: set[int] = set()
        for consumer in consumers:
            statement = consumer.statement
            allowed.add(id(statement.iter if isinstance(statement, cst.For) else statement.body[0].value.args[0].value))
        for statement in rest:
            for node in scopes.walk_all(statement):
                if isinstance(node, cst.Name) and node.value == name and id(node) not in allowed:
                    self.reject(node, f"generator object {name} kept in a variable and used here")
        total = sum(isinstance(node, cst.Name) and node.value == name for node in _every_node(self.read.definition))
        if total != 1 + len(consumers):
            self.reject(made, f"generator object {name} kept in a variable and used outside the block it is made in")


def _every_node(root):
    pending = [root]
    while pending:
        node = pending.pop()
        yield node
        pending += scopes.children(node)


def _is(node, name: str) -> bool:
    node = syntax.strip_parentheses(node)
    return isinstance(node, cst.Name) and node.value == name


def _jumps(statement):
    """The break and continue statements of `statement` that leave it (not those of its own loops)."""
    pending = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.Break, cst.Continue)):
            yield node
        if isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            pending += [c for c in scopes.children(node) if isinstance(c, cst.Else)]
            continue
        pending += scopes.children(node)


def _blocks_indented(statements: list) -> list:
    return [s.visit(_Indent()) for s in statements]


class _Indent(cst.CSTTransformer):
    """`if c: break` on one line as an indented block, so a `break` can become several statements."""

    def leave_SimpleStatementSuite(self, original, updated):
        return cst.IndentedBlock([cst.SimpleStatementLine(updated.body)])


class _Breaks(scopes.LoopDepth, cst.CSTTransformer):
    """The consumer loop's own `break`s (not those of loops inside it) as `leaving`."""

    def __init__(self, leaving: list):
        self.leaving = leaving
        self.depth = 0

    def leave_SimpleStatementLine(self, original, updated):
        if self.depth or not any(isinstance(s, cst.Break) for s in updated.body):
            return updated
        index = next(i for i, s in enumerate(updated.body) if isinstance(s, cst.Break))
        head = [updated.with_changes(body=updated.body[:index])] if index else []
        return cst.FlattenSentinel([*head, *self.leaving])


def _chain(branches: list) -> cst.If:
    result = None
    for test, body in reversed(branches):
        result = cst.If(test, cst.IndentedBlock(body), orelse=result)
    return result


def _assign(name: str, value) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def _assign_to(target, name: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], cst.Name(name))])


