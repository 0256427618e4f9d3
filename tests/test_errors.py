"""Errors that mean one thing (issue 21): what each class is, what a notebook section and the CLI do with it.

* a :class:`MissingDataError` (the release lacks an optional part) is the only error
  :func:`section` turns into "skipped -- reason";
* bad data (:class:`VoxMemDataError`), a bad argument (:class:`InputError`) and bugs propagate;
* the command line: bad data exit 1, a bad argument, a limit or an unusable path exit 2, anything
  else (a bare ``ValueError``/``KeyError``/``TypeError``: a bug) exit 3 with how to get the traceback.
"""
from __future__ import annotations

import io

import pytest

from voxmem_analysis.analysis import results as R
from voxmem_analysis.analysis.selection import section
from voxmem_analysis.cli import DEBUG_ENV, main
from voxmem_analysis.errors import (USAGE_ERRORS, AnalysisInputError, InputError, MissingDataError, Problem,
                                    ResourceLimitError, StatsInputError, UnknownNameError, VoxMemDataError)
from voxmem_analysis.io import load_release
from voxmem_analysis.stats import wilson_interval


# ============================================================================ the classes
def test_an_argument_error_is_not_a_data_error():
    for cls in (InputError, AnalysisInputError, StatsInputError, UnknownNameError):
        assert not issubclass(cls, VoxMemDataError), cls
        assert issubclass(cls, ValueError) and issubclass(cls, USAGE_ERRORS)
    assert issubclass(MissingDataError, VoxMemDataError)
    assert not issubclass(ResourceLimitError, VoxMemDataError)


def test_an_unknown_name_is_a_key_error_with_a_plain_message():
    exc = UnknownNameError("unknown artifact 'x'; known: a, b", "name")
    assert isinstance(exc, KeyError) and isinstance(exc, InputError)
    assert str(exc) == "unknown artifact 'x'; known: a, b"       # not KeyError's quoted repr
    assert exc.field == "name"


def test_the_artifact_registry_raises_an_unknown_name():
    from voxmem_analysis import artifacts

    with pytest.raises(UnknownNameError, match="unknown artifact 'table99'; known: .*table15"):
        artifacts.get("table99")


# ============================================================================ section()
def test_section_raises_on_a_bad_argument():
    buf = io.StringIO()
    with pytest.raises(StatsInputError, match="ci_level"):
        with section("X", stream=buf):
            wilson_interval(3, 10, ci_level=1.5)
    assert buf.getvalue() == ""


def test_section_prints_the_reason_of_missing_data_and_carries_on():
    buf = io.StringIO()
    with section("Table 15", stream=buf):
        raise MissingDataError("no model was run at 64K", "budgets run in this release: 8K")
    assert buf.getvalue() == "Table 15: skipped \u2014 no model was run at 64K\n"


@pytest.mark.parametrize("exc", [
    VoxMemDataError([Problem("malformed_json", "error", "not JSON", "p.jsonl", 3)]),   # bad data
    AnalysisInputError("unknown budget '12K'", "budget"),                              # a bad argument
    KeyError("evidence_type"), TypeError("unsupported operand"),                       # bugs
])
def test_section_never_skips_bad_data_arguments_or_bugs(exc):
    buf = io.StringIO()
    with pytest.raises(type(exc)):
        with section("X", stream=buf):
            raise exc
    assert buf.getvalue() == ""


def test_section_on_a_release_skips_what_it_lacks_and_raises_on_a_bad_budget(tiny_release):
    rel = load_release(tiny_release)
    buf = io.StringIO()
    with section("Table 15", stream=buf):
        R.table15(rel, budget="32K")
    assert buf.getvalue().startswith("Table 15: skipped \u2014 no model was run at 32K")
    with pytest.raises(InputError, match="unknown budget '12K'"):
        with section("Table 15", stream=buf):
            R.table15(rel, budget="12K")


# ============================================================================ the command line
def _run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, err


def test_cli_a_data_folder_that_does_not_exist_exits_2(tmp_path, capsys):
    code, err = _run(capsys, "table", "table15", "--data", tmp_path / "nowhere")
    assert code == 2 and f"error: table: --data {str(tmp_path / 'nowhere')!r} does not exist" in err


def test_cli_missing_data_exits_1_with_its_reason(tiny_release, capsys):
    code, err = _run(capsys, "table", "table15", "--data", tiny_release, "--budget", "32K")
    assert code == 1 and "no model was run at 32K" in err


@pytest.mark.parametrize("argv, message", [
    (["table", "table15", "--budget", "12K"], "error: table: unknown budget '12K'; expected one of 8K, 16K, 32K, 64K"),
    (["table", "table99"], "unknown artifact 'table99'; known:"),
    (["compare", "--models", "Model-A,Model-Z", "--budget", "8K"], "error: compare: unknown model(s) 'Model-Z'"),
    (["items", "--model", "Model-A", "--budget", "8K", "--by", "nope"], "error: items: unknown column(s) in --by: nope"),
    (["slice", "--by", "model", "--where", "no_such_column = 1"], "error: slice: --where 'no_such_column = 1'"),
])
def test_cli_a_bad_argument_exits_2(tiny_release, capsys, argv, message):
    code, err = _run(capsys, *argv, "--data", tiny_release)
    assert code == 2, err
    assert message in err


def test_cli_an_unusable_path_exits_2(tiny_release, capsys, monkeypatch):
    from voxmem_analysis.commands import compare as paired

    def unusable(*a, **k):
        raise PermissionError(13, "Permission denied", "/srv/locked/file.csv")

    monkeypatch.setattr(paired, "compare_models", unusable)
    code, err = _run(capsys, "compare", "--data", tiny_release, "--models", "Model-A,Model-B", "--budget", "8K")
    assert code == 2
    assert "error: compare: cannot use '/srv/locked/file.csv': Permission denied" in err


@pytest.mark.parametrize("bug", [KeyError("evidence_type"), ValueError("cannot reshape array"),
                                 TypeError("unsupported operand type(s)")])
@pytest.mark.parametrize("command", ["compare", "table"])
def test_cli_an_injected_bug_is_an_internal_error_never_bad_arguments(tiny_release, capsys, monkeypatch, bug,
                                                                      command):
    from voxmem_analysis.commands import compare as paired

    def broken(*a, **k):
        raise bug

    monkeypatch.delenv(DEBUG_ENV, raising=False)
    if command == "compare":       # the analysis a command calls breaks
        monkeypatch.setattr(paired, "compare_models", broken)
        argv = ["compare", "--data", tiny_release, "--models", "Model-A,Model-B", "--budget", "8K"]
    else:                          # an artifact: the analysis it calls breaks
        monkeypatch.setattr(R, "scored_frame", broken)
        argv = ["table", "table15", "--data", tiny_release, "--budget", "8K"]
    code, err = _run(capsys, *argv)
    assert code == 3, err
    assert f"internal error in `{command}`: {type(bug).__name__}" in err
    assert f"rerun with {DEBUG_ENV}=1 to see the traceback" in err
    assert "bad argument" not in err and not err.startswith("error:")


def test_cli_debug_shows_the_bug_itself(tiny_release, capsys, monkeypatch):
    from voxmem_analysis.commands import compare as paired

    def broken(*a, **k):
        raise KeyError("evidence_type")

    monkeypatch.setattr(paired, "compare_models", broken)
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(KeyError, match="evidence_type"):
        main(["compare", "--data", str(tiny_release), "--models", "Model-A,Model-B", "--budget", "8K"])
