"""Audio MultiChallenge input validation: each bad input names its code, file, line and field;
lenient mode leaves the bad rows out and counts them."""
from __future__ import annotations

import pytest

from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_amc
from tests.test_amc import RUBRICS, TASKS, verdict_csv, write_release


def errors_of(root, **kw):
    with pytest.raises(VoxMemDataError) as exc:
        load_amc(root, **kw)
    return [p for p in exc.value.problems if p.severity == "error"]


def only(problems, code):
    hits = [p for p in problems if p.code == code]
    assert len(hits) == 1, [str(p) for p in problems]
    return hits[0]


def test_missing_rubric_rows_for_a_task(tmp_path):
    lines = verdict_csv().splitlines()
    # line 1 header; M/Text rows: r1a (2), r1b (3), r2a (4), r2b (5), r2c (6) ...; drop r2b
    text = "\n".join(l for i, l in enumerate(lines, 1) if i != 5) + "\n"
    root = write_release(tmp_path / "r", verdicts=text)
    p = only(errors_of(root), "missing_rubric_verdicts")
    assert (p.file, p.line, p.field) == ("verdicts/v.csv", 4, "rubric_id")
    assert "r2b" in p.message and "t2" in p.message
    rel = load_amc(root, strict=False)
    assert rel.stats["incomplete_task_rows"] == 2          # r2a and r2c of M/Text left out, counted
    assert not ((rel.verdicts["task_id"] == "t2") & (rel.verdicts["output_modality"] == "Text")).any()
    assert "rows of the task out" in only(rel.errors(), "missing_rubric_verdicts").message   # said, not hidden


def test_task_without_rubrics(tmp_path):
    root = write_release(tmp_path / "r", tasks=TASKS + "t5,SC,false,false,true,10,3\n")
    p = only(errors_of(root), "task_without_rubrics")
    assert (p.file, p.line, p.field) == ("tasks.csv", 6, "task_id")
    assert "t5" in p.message


def test_unknown_axis(tmp_path):
    root = write_release(tmp_path / "r", tasks=TASKS.replace("t3,SC,", "t3,Memory,"))
    p = only(errors_of(root), "unknown_axis")
    assert (p.file, p.line, p.field) == ("tasks.csv", 4, "axis")
    assert "'Memory'" in p.message


def test_rubric_for_an_unknown_task(tmp_path):
    root = write_release(tmp_path / "r", rubrics=RUBRICS + "r9,t9,,,false\n")
    p = only(errors_of(root), "unknown_task")
    assert (p.file, p.line, p.field) == ("rubrics.csv", 12, "task_id")
    assert "t9" in p.message


@pytest.mark.parametrize("bad", ["maybe", "2", "yes", ""])
def test_passed_not_boolean_csv(tmp_path, bad):
    lines = verdict_csv().splitlines()
    lines[6] = lines[6].rsplit(",", 1)[0] + f",{bad}"          # line 7 of the file: M/Text r3a
    root = write_release(tmp_path / "r", verdicts="\n".join(lines) + "\n")
    errs = errors_of(root)
    p = only(errs, "missing_field" if bad == "" else "not_boolean")
    assert (p.file, p.line, p.field) == ("verdicts/v.csv", 7, "passed")


def test_passed_not_boolean_jsonl(tmp_path):
    rows = [l.split(",") for l in verdict_csv().splitlines()[1:]]
    body = []
    for i, (m, mod, t, r, p) in enumerate(rows):
        val = '"yes"' if i == 3 else p
        body.append(f'{{"model": "{m}", "output_modality": "{mod}", "task_id": "{t}", "rubric_id": "{r}", "passed": {val}}}')
    root = write_release(tmp_path / "r", verdicts="", extra={"verdicts/v.jsonl": "\n".join(body) + "\n"})
    (root / "verdicts" / "v.csv").unlink()
    p = only(errors_of(root), "not_boolean")
    assert (p.file, p.line, p.field) == ("verdicts/v.jsonl", 4, "passed")


def test_rubric_of_another_task_and_unknown_rubric(tmp_path):
    text = verdict_csv().replace("M,Text,t1,r1b,", "M,Text,t2,r1b,").replace("M,Audio,t4,r4d,", "M,Audio,t4,r4x,")
    errs = errors_of(write_release(tmp_path / "r", verdicts=text))
    p = only(errs, "rubric_task_mismatch")
    assert (p.file, p.line, p.field) == ("verdicts/v.csv", 3, "rubric_id")
    q = only(errs, "unknown_rubric")
    assert (q.file, q.line, q.field) == ("verdicts/v.csv", 21, "rubric_id")


def test_conflicting_duplicate(tmp_path):
    text = verdict_csv() + "M,Text,t1,r1a,false\n"
    p = only(errors_of(write_release(tmp_path / "r", verdicts=text)), "duplicate_conflict")
    assert (p.file, p.line, p.field) == ("verdicts/v.csv", 22, "passed")


def test_audio_cue_outside_inference_memory(tmp_path):
    root = write_release(tmp_path / "r", tasks=TASKS.replace("t2,IR,false", "t2,IR,true"))
    p = only(errors_of(root), "invalid_field")
    assert (p.file, p.line, p.field) == ("tasks.csv", 3, "audio_cue")


def test_lenient_counts_what_it_leaves_out(tmp_path):
    lines = verdict_csv().splitlines()
    lines[6] = lines[6].rsplit(",", 1)[0] + ",maybe"
    rel = load_amc(write_release(tmp_path / "r", verdicts="\n".join(lines) + "\n"), strict=False)
    assert rel.stats["rejected_rows"] == 1 and rel.stats["incomplete_task_rows"] == 0
    assert {p.code for p in rel.errors()} == {"not_boolean", "missing_tasks"}   # M/Text: t3 has no verdict left
    assert len(rel.verdicts) == 19       # t3 has one rubric: its row is the rejected one


def test_cli_reports_file_line_field_without_traceback(tmp_path, capsys):
    from voxmem_analysis.cli import main

    root = write_release(tmp_path / "r", tasks=TASKS.replace("t3,SC,", "t3,XX,"))
    assert main(["table", "amc_table2", "--data", str(root)]) == 1
    err = capsys.readouterr().err
    assert "unknown_axis: tasks.csv:4 [axis]" in err and "Traceback" not in err


def test_passed_not_boolean_parquet_names_the_row(tmp_path):
    import pandas as pd

    from tests.test_amc import write_release as write

    root = write(tmp_path / "r", verdicts="")
    (root / "verdicts" / "v.csv").unlink()
    rows = [l.split(",") for l in verdict_csv().splitlines()[1:]]
    df = pd.DataFrame(rows, columns=["model", "output_modality", "task_id", "rubric_id", "passed"])
    df.loc[2, "passed"] = "perhaps"                      # the third row
    df.to_parquet(root / "verdicts" / "v.parquet")
    p = only(errors_of(root), "not_boolean")
    assert (p.file, p.line, p.field) == ("verdicts/v.parquet", 3, "passed")
