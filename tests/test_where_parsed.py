"""``--where`` is parsed into a syntax tree of allowed nodes and written back (issue 24).

Hand-checked filters, the refusals with their reasons, and a fuzz of random token sequences
(hypothesis) asserting that whatever the input, the only SQL that ever reaches polars is built from
the allow-list: quoted frame columns, literals, operators, allowed functions -- never a table
function, a sub-query, a comment or a second statement.
"""
from __future__ import annotations

import re

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxmem_analysis.analysis.subsets import filter_where
from voxmem_analysis.analysis.where import FUNCTIONS, MAX_DEPTH, WhereError, parse_where, render
from voxmem_analysis.errors import AnalysisInputError

FRAME = pl.DataFrame({"a": [1, 2, 3, 4], "s": ["x", "from y", "z", None], "b": [True, False, None, True],
                      "x": [1.5, None, -2.0, 0.0]})


@pytest.mark.parametrize("where, rows", [
    ("s = 'from y' OR a >= 3", [2, 3, 4]),
    ("a IN (1, 3) AND s LIKE 'x%'", [1]),
    ("a BETWEEN 2 AND 3", [2, 3]),
    ("a NOT BETWEEN 2 AND 3", [1, 4]),
    ("b", [1, 4]),
    ("NOT b", [2]),
    ("s IS NULL", [4]),
    ("x IS NOT NULL AND x < 0", [3]),
    ("lower(s) ILIKE 'X%' OR a * 2 - 1 = 5", [1, 3]),
    ("length(s) > 1", [2]),
    ("s = 'it''s'", []),
    ("-a < -3", [4]),
    ("a % 2 = 0 AND NOT a IN (4)", [2]),
    ('"a" = 1', [1]),
])
def test_filters_by_hand(where, rows):
    assert filter_where(FRAME, where)["a"].to_list() == rows


@pytest.mark.parametrize("where, reason", [
    ("a = 1 /* ' */ OR a IN (SELECT a FROM read_csv('/etc/passwd')) /* ' */", "comments ('/*' at position 7)"),
    ("a = 1 -- '\n OR a IN (SELECT 1)", "comments ('--' at position 7)"),
    ("a = 1 # x", "comments"),
    ("a IN (SELECT a FROM self)", "a sub-query is not accepted ('SELECT' at position 7)"),
    ("(SELECT 1) = 1", "a sub-query is not accepted"),
    ("read_csv('/etc/passwd') IS NULL", "the function 'read_csv' (position 1) is not allowed"),
    ("read_parquet('x') = 1", "the function 'read_parquet'"),
    ("a = 1 UNION ALL SELECT * FROM self", "'UNION' at position 7 is not allowed"),
    ("a = 1; DROP TABLE self", "';' (one expression, not several statements) at position 6"),
    ("no_such = 1", "unknown column 'no_such' at position 1"),
    ("A = 1", "(did you mean 'a'?)"),
    ("s = \"nope\"", "text goes in single quotes"),
    ("s = 'open", "an unterminated string at position 5"),
    ("a = 1 OR", "expected a value or a column at the end"),
    ("   ", "empty expression"),
    ("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} levels deep"),
    (" OR ".join(["a = 1"] * 700), "at most 2,000"),
])
def test_refused_with_the_reason(where, reason):
    with pytest.raises(AnalysisInputError) as exc:
        filter_where(FRAME, where)
    assert "one boolean expression on the frame's columns" in str(exc.value) and reason in str(exc.value)


def test_long_chains_run_flat():
    assert filter_where(FRAME, " OR ".join(["a = 1"] * 400))["a"].to_list() == [1]
    assert render(parse_where("a - a - a = -2", ["a"])) == '(("a" - "a" - "a") = (- 2))'


# ----------------------------------------------------------------------------- fuzz
_VOCAB = ["a", "s", "b", "x", "A", "self", "'x'", "'it''s'", "1", "2.5", "1e3", "(", ")", ",", "=", "<>", "<", ">=",
          "+", "-", "*", "/", "%", "||", "AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "LIKE", "ILIKE", "BETWEEN",
          "SELECT", "FROM", "UNION", "JOIN", "WITH", "read_csv", "read_parquet", "scan_csv", "lower", "length",
          "abs", "coalesce", "--", "/*", "*/", ";", "'", '"a"', '"', "\n", "*", "#"]
_ALLOWED_WORDS = {w.upper() for w in ("AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "LIKE", "ILIKE",
                                      "BETWEEN")} | {f.upper() for f in FUNCTIONS}


def _only_allowed(sql: str, columns) -> bool:
    bare = re.sub(r"'(?:[^']|'')*'", "", sql)                      # string literals out
    quoted = re.findall(r'"((?:[^"]|"")*)"', bare)
    assert all(q.replace('""', '"') in columns for q in quoted)
    bare = re.sub(r'"(?:[^"]|"")*"', "", bare)                     # quoted columns out
    assert "--" not in bare and "/*" not in bare and ";" not in bare and "#" not in bare
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", bare):
        if word.upper() not in _ALLOWED_WORDS and not re.fullmatch(r"e\d*", word):   # 1e3's exponent
            return False
    return True


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(tokens=st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=14), sep=st.sampled_from([" ", "", "  "]))
def test_nothing_outside_the_allow_list_ever_runs(tokens, sep):
    text = sep.join(tokens)
    seen: list[str] = []
    real = pl.DataFrame.sql

    def spy(self, query, *a, **k):
        seen.append(query)
        return real(self, query, *a, **k)

    pl.DataFrame.sql = spy
    try:
        try:
            filter_where(FRAME, text)
        except AnalysisInputError:
            pass
    finally:
        pl.DataFrame.sql = real
    for query in seen:
        assert query.startswith("SELECT * FROM self WHERE ")
        assert _only_allowed(query[len("SELECT * FROM self WHERE "):], FRAME.columns), (text, query)
    if seen:   # what ran is the re-rendering of a parsed tree, never the text itself
        try:
            tree = parse_where(text, FRAME.columns)
        except WhereError:
            pytest.fail(f"{text!r} ran although it does not parse")
        assert seen[0].endswith(render(tree))
