"""``--where``: one boolean expression over a frame's columns, parsed by the grammar below into a syntax tree and
written back as SQL (columns quoted, strings re-escaped): only that text runs, as the ``WHERE`` clause of a query
on the in-memory frame, so no sub-query, table function or file can be reached.

Grammar (keywords in any case)::

    expr      := or
    or        := and ("OR" and)*
    and       := not ("AND" not)*
    not       := "NOT" not | predicate
    predicate := sum [ ("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") sum
                     | ["NOT"] "IN" "(" sum ("," sum)* ")"
                     | ["NOT"] "BETWEEN" sum "AND" sum
                     | ["NOT"] ("LIKE" | "ILIKE") sum
                     | "IS" ["NOT"] ("NULL" | "TRUE" | "FALSE") ]
    sum       := product (("+" | "-" | "||") product)*
    product   := unary (("*" | "/" | "%") unary)*
    unary     := ("-" | "+") unary | primary
    primary   := number | 'string' | TRUE | FALSE | NULL | column | function "(" sum ("," sum)* ")"
               | "(" expr ")"

Refused with the reason: comments, ``;``, a sub-query, an unknown function or column, a function without
arguments, and text beyond the limits below (size checked before parsing).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["WhereError", "parse_where", "render", "FUNCTIONS", "MAX_DEPTH", "MAX_LENGTH", "MAX_TOKENS",
           "MAX_OPERATORS", "MAX_ARITHMETIC"]

#: Scalar functions allowed in ``--where`` (string predicates and simple arithmetic).
FUNCTIONS = frozenset({"lower", "upper", "length", "char_length", "trim", "ltrim", "rtrim", "starts_with",
                       "ends_with", "abs", "round", "floor", "ceil", "coalesce", "strpos", "substr"})
#: Words that only a query (not an expression) uses: named in the refusal.
_QUERY_WORDS = frozenset({"select", "from", "union", "join", "with", "where", "group", "order", "having", "limit",
                          "into", "insert", "update", "delete", "drop", "create", "copy", "attach", "pragma",
                          "values", "table", "exists", "all", "any", "some", "over", "case", "cast", "as"})
_KEYWORDS = frozenset({"and", "or", "not", "in", "is", "null", "true", "false", "like", "ilike", "between"})
MAX_DEPTH = 32
MAX_LENGTH = 20_000
#: At most this many tokens (words, numbers, strings, operators).
MAX_TOKENS = 2_000
#: At most this many operators (comparisons, AND, OR, NOT ...), of which :data:`MAX_ARITHMETIC` arithmetic.
MAX_OPERATORS = 1_000
MAX_ARITHMETIC = 64
_OPERATOR_WORDS = frozenset({"and", "or", "not", "in", "is", "like", "ilike", "between"})

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>--|/\*|\*/|\#)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<string>'(?:[^']|'')*')
  | (?P<qident>"(?:[^"]|"")+")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><=|>=|<>|!=|==|\|\||[=<>+\-*/%(),])
""", re.X)


class WhereError(ValueError):
    """Why a ``--where`` text is not accepted."""


@dataclass(frozen=True)
class Node:
    kind: str            # col, num, str, const, unary, binary, in, between, like, is, func
    value: object = None
    args: tuple = ()


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            what = "an unterminated string" if ch in "'\"" else f"the character {ch!r}"
            if ch == ";":
                what = "';' (one expression, not several statements)"
            raise WhereError(f"{what} at position {pos + 1}")
        kind = m.lastgroup
        if kind == "comment":
            raise WhereError(f"comments ({m.group(0)!r} at position {pos + 1}) are not accepted")
        if kind != "ws":
            out.append((kind, m.group(0), pos + 1))
        pos = m.end()
    return out


def _bounded(toks) -> None:
    """Size and depth bounds, checked on the tokens before any parsing."""
    if len(toks) > MAX_TOKENS:
        raise WhereError(f"{len(toks):,} words and operators; at most {MAX_TOKENS:,}")
    ops = sum(1 for kind, text, _ in toks if (kind == "op" and text not in "(),")
              or (kind == "ident" and text.lower() in _OPERATOR_WORDS))
    arithmetic = sum(1 for kind, text, _ in toks if kind == "op" and text in ("+", "-", "*", "/", "%", "||"))
    if ops > MAX_OPERATORS or arithmetic > MAX_ARITHMETIC:
        raise WhereError(f"{ops:,} operators, {arithmetic:,} of them arithmetic; at most {MAX_OPERATORS:,} and "
                         f"{MAX_ARITHMETIC} (split the filter, or use IN (...))")
    depth = deepest = 0
    for kind, text, _ in toks:
        depth += (kind == "op" and text == "(") - (kind == "op" and text == ")")
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise WhereError(f"nested more than {MAX_DEPTH} levels deep (brackets)")


def _nesting(node: Node) -> int:
    """Levels of brackets the rendered SQL has (a chain of one operator counts once), without recursion."""
    deepest, stack = 0, [(node, 1, None)]
    while stack:
        n, depth, parent_op = stack.pop()
        flat = n.kind == "binary" and n.value == parent_op
        level = depth - 1 if flat else depth
        deepest = max(deepest, level)
        for child in n.args:
            stack.append((child, level + 1, n.value if n.kind == "binary" else None))
    return deepest


class _Parser:
    def __init__(self, text: str, columns):
        self.toks = _tokens(text)
        _bounded(self.toks)
        self.i = 0
        self.columns = list(columns)
        self.depth = 0

    # -- helpers
    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("end", "", -1)

    def word(self, *words: str, k: int = 0) -> bool:
        kind, text, _ = self.peek(k)
        return kind == "ident" and text.lower() in words

    def op(self, *ops: str) -> bool:
        kind, text, _ = self.peek()
        return kind == "op" and text in ops

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expect_op(self, op: str) -> None:
        if not self.op(op):
            raise WhereError(f"expected {op!r} {self.where()}")
        self.i += 1

    def where(self) -> str:
        kind, text, pos = self.peek()
        return "at the end" if kind == "end" else f"at {text!r} (position {pos})"

    def deeper(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise WhereError(f"nested more than {MAX_DEPTH} levels deep")

    # -- grammar
    def parse(self) -> Node:
        if not self.toks:
            raise WhereError("empty expression")
        node = self.or_()
        if self.word(*_QUERY_WORDS):
            raise WhereError(f"{self.peek()[1]!r} at position {self.peek()[2]} is not allowed: --where takes one "
                             "boolean expression, not a query")
        if self.peek()[0] != "end":
            raise WhereError(f"unexpected {self.where()}")
        return node

    def chain(self, operand, *ops: str) -> Node:
        """``operand (op operand)*``, left-leaning; ``ops``: operators, or keywords (lower case)."""
        node = operand()
        while self.op(*ops) or self.word(*ops):
            node = Node("binary", self.take()[1].upper(), (node, operand()))
        return node

    def or_(self) -> Node:
        return self.chain(self.and_, "or")

    def and_(self) -> Node:
        return self.chain(self.not_, "and")

    def not_(self) -> Node:
        if self.word("not"):
            self.take()
            self.deeper()
            node = Node("unary", "NOT", (self.not_(),))
            self.depth -= 1
            return node
        return self.predicate()

    def predicate(self) -> Node:
        left = self.sum_()
        if self.op("=", "==", "!=", "<>", "<", "<=", ">", ">="):
            op = {"==": "=", "!=": "<>"}.get(self.peek()[1], self.peek()[1])
            self.take()
            return Node("binary", op, (left, self.sum_()))
        if self.word("is"):
            self.take()
            neg = self.word("not") and bool(self.take())
            if not self.word("null", "true", "false"):
                raise WhereError(f"IS must be followed by [NOT] NULL, TRUE or FALSE {self.where()}")
            return Node("is", (neg, self.take()[1].upper()), (left,))
        neg = self.word("not") and self.word("in", "between", "like", "ilike", k=1)
        if neg:
            self.take()
        if self.word("in"):
            self.take()
            return Node("in", neg, (left, *self.in_list()))
        if self.word("between"):
            self.take()
            low = self.sum_()
            if not self.word("and"):
                raise WhereError(f"BETWEEN needs AND {self.where()}")
            self.take()
            return Node("between", neg, (left, low, self.sum_()))
        if self.word("like", "ilike"):
            op = self.take()[1].upper()
            return Node("like", (neg, op), (left, self.sum_()))
        return left

    def in_list(self) -> list[Node]:
        self.expect_op("(")
        if self.word(*_QUERY_WORDS):
            raise WhereError(f"a sub-query is not accepted ({self.peek()[1]!r} at position {self.peek()[2]}); "
                             "IN takes a list of values")
        items = [self.sum_()]
        while self.op(","):
            self.take()
            items.append(self.sum_())
        self.expect_op(")")
        return items

    def sum_(self) -> Node:
        return self.chain(self.product, "+", "-", "||")

    def product(self) -> Node:
        return self.chain(self.unary, "*", "/", "%")

    def unary(self) -> Node:
        if self.op("-", "+"):
            op = self.take()[1]
            self.deeper()
            node = Node("unary", op, (self.unary(),))
            self.depth -= 1
            return node
        return self.primary()

    def primary(self) -> Node:
        kind, text, pos = self.peek()
        if kind == "number":
            self.take()
            return Node("num", text)
        if kind == "string":
            self.take()
            return Node("str", text[1:-1].replace("''", "'"))
        if kind == "op" and text == "(":
            self.take()
            if self.word(*_QUERY_WORDS):
                raise WhereError(f"a sub-query is not accepted ({self.peek()[1]!r} at position {self.peek()[2]})")
            self.deeper()
            node = self.or_()
            self.depth -= 1
            self.expect_op(")")
            return node
        if kind == "ident" and self.op_after("("):
            return self.function()
        if kind == "ident" and text.lower() in ("true", "false", "null"):
            self.take()
            return Node("const", text.upper())
        if kind == "ident" and text.lower() in _QUERY_WORDS | _KEYWORDS and text not in self.columns:
            raise WhereError(f"{text!r} at position {pos} is not allowed here: --where takes one boolean "
                             "expression, not a query")
        if kind in ("ident", "qident"):
            self.take()
            return Node("col", self.column(text if kind == "ident" else text[1:-1].replace('""', '"'), pos,
                                           kind == "qident"))
        raise WhereError(f"expected a value or a column {self.where()}")

    def op_after(self, op: str) -> bool:
        kind, text, _ = self.peek(1)
        return kind == "op" and text == op

    def function(self) -> Node:
        _, name, pos = self.take()
        if name.lower() not in FUNCTIONS:
            raise WhereError(f"the function {name!r} (position {pos}) is not allowed: only "
                             f"{', '.join(sorted(FUNCTIONS))} (no table functions or file access)")
        self.expect_op("(")
        self.deeper()
        if self.op(")"):
            raise WhereError(f"the function {name!r} (position {pos}) needs at least one argument")
        args = [self.sum_()]
        while self.op(","):
            self.take()
            args.append(self.sum_())
        self.depth -= 1
        self.expect_op(")")
        return Node("func", name.lower(), tuple(args))

    def column(self, name: str, pos: int, quoted: bool = False) -> str:
        if name in self.columns:
            return name
        close = [c for c in self.columns if c.lower() == name.lower()]
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        if quoted and not close:
            hint = " (text goes in single quotes: 'like this')"
        raise WhereError(f"unknown column {name!r} at position {pos}{hint}; the columns: {', '.join(self.columns)}")


def parse_where(text: str, columns) -> Node:
    """The syntax tree of ``text`` over ``columns``, or :class:`WhereError` saying why it is refused."""
    if len(text) > MAX_LENGTH:
        raise WhereError(f"{len(text):,} characters; at most {MAX_LENGTH:,}")
    tree = _Parser(text, columns).parse()
    if _nesting(tree) > MAX_DEPTH:
        raise WhereError(f"nested more than {MAX_DEPTH} levels deep (each change of operator in a chain such as "
                         "a + 1 - 1 counts one level); simplify the expression")
    return tree


def _quote_col(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def render(node: Node) -> str:
    """The SQL text of a tree from :func:`parse_where`: every node parenthesised, columns quoted."""
    k, a = node.kind, node.args
    if k == "col":
        return _quote_col(node.value)
    if k == "num" or k == "const":
        return str(node.value)
    if k == "str":
        return "'" + str(node.value).replace("'", "''") + "'"
    if k == "unary":
        return f"({node.value} {render(a[0])})"
    if k == "binary":  # a left-leaning chain of one operator is written flat: a OR b OR c
        terms = [a[1]]
        left = a[0]
        while left.kind == "binary" and left.value == node.value:
            terms.append(left.args[1])
            left = left.args[0]
        terms.append(left)
        return "(" + f" {node.value} ".join(render(t) for t in reversed(terms)) + ")"
    if k == "in":
        return f"({render(a[0])} {'NOT ' if node.value else ''}IN ({', '.join(render(x) for x in a[1:])}))"
    if k == "between":
        return f"({render(a[0])} {'NOT ' if node.value else ''}BETWEEN {render(a[1])} AND {render(a[2])})"
    if k == "like":
        neg, op = node.value
        return f"({render(a[0])} {'NOT ' if neg else ''}{op} {render(a[1])})"
    if k == "is":
        neg, what = node.value
        return f"({render(a[0])} IS {'NOT ' if neg else ''}{what})"
    if k == "func":
        return f"{node.value.upper()}({', '.join(render(x) for x in a)})"
    raise AssertionError(f"unknown node {k}")  # pragma: no cover - the parser makes no other kind
