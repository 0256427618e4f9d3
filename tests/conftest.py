"""Shared fixtures: tiny release directories written line by line in the harness's format."""
from __future__ import annotations

import contextlib
import gzip
import io
import json
from pathlib import Path

import pytest

import matplotlib

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[1]
SYNTHETIC = REPO / "data" / "synthetic"


@pytest.fixture(scope="session", autouse=True)
def _cache_outside_home(tmp_path_factory):
    """The parsed-release cache of every test (and of the commands tests start) goes to a temporary
    folder, never to the user's ~/.cache (VOXMEM_CACHE_DIR, see voxmem_analysis.io.engine.cache)."""
    import os

    old = os.environ.get("VOXMEM_CACHE_DIR")
    os.environ["VOXMEM_CACHE_DIR"] = str(tmp_path_factory.mktemp("voxmem-cache"))
    yield
    if old is None:
        os.environ.pop("VOXMEM_CACHE_DIR", None)
    else:
        os.environ["VOXMEM_CACHE_DIR"] = old


def run_cli(argv, capsys=None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of one command run in this process, argparse errors (SystemExit)
    included: read from pytest's ``capsys`` when given, else from redirected streams (e.g. in a
    Hypothesis test).  No traceback and no "internal error" (exit 3) may reach the user."""
    from voxmem_analysis.cli import main

    streams = (io.StringIO(), io.StringIO())
    with contextlib.ExitStack() as stack:
        if capsys is None:
            stack.enter_context(contextlib.redirect_stdout(streams[0]))
            stack.enter_context(contextlib.redirect_stderr(streams[1]))
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:
            rc = exc.code
    out, err = capsys.readouterr() if capsys is not None else (s.getvalue() for s in streams)
    assert "Traceback" not in err and "Traceback" not in out and "internal error" not in err
    return rc, out, err


def harness_line(**over) -> dict:
    """One scored prediction exactly as score_voxmembench.py writes it (FORMATS.md §1)."""
    rec = {
        "item_id": "q_00010_8k", "question_id": "q_00010", "context_length": "8K", "family_id": "fam_00009",
        "evidence_type": "speaker_information", "memory_operation": "information_extraction",
        "subtype": "cue_to_fact", "question_text": "What did I say about the lamp?",
        "expected_response": "answer", "gold_json": json.dumps({"answer": "paused"}),
        "answer_type": "short_text", "answer_normalization": "semantic",
        "session_count": 9, "evidence_session_count": 1, "samekey_haystack_session_count": 1,
        "model": "Model-A", "allow_abstention": True, "system_prompt_delivery": "native", "n_audio_clips": 40,
        "response": "paused", "verdict": True, "judge": "gemini-3.7-flash", "judge_raw": '{"verdict":"correct"}',
    }
    rec.update(over)
    return rec


def write_jsonl(path: Path, records, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    if gz:
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        path.write_text(text)
    return path


@pytest.fixture
def tiny_release(tmp_path):
    """Two models x two questions (one answerable, one refusal) x two budgets, all rules exercised."""
    return write_tiny_release(tmp_path / "rel")


def write_tiny_release(root: Path) -> Path:
    """The release of the ``tiny_release`` fixture, written to ``root``."""
    ar = dict(question_id="q_00011", family_id="fam_00009", memory_operation="answer_refusal",
              expected_response="insufficient_evidence", subtype="cue_to_fact", gold_json='"insufficient evidence"')
    a_lines = [
        harness_line(),
        harness_line(item_id="q_00010_64k", context_length="64k", response="drawer", verdict=False),
        harness_line(item_id="q_00011_8k", **ar, response="insufficient evidence", verdict=True),
        harness_line(item_id="q_00011_64k", context_length="64K", **ar, response=None, verdict=None,
                     error="generation failed: timeout"),
    ]
    b_lines = [
        harness_line(model="Model-B", response=None, verdict=None,
                     error="provider rejected: request blocked before inference (HTTP 400 invalid_request)"),
        harness_line(model="Model-B", item_id="q_00010_64k", context_length="64K", response="paused", verdict=None,
                     judge_raw="I think it is right"),
        harness_line(model="Model-B", item_id="q_00011_8k", **ar, response="I cannot hear audio", verdict=False),
        harness_line(model="Model-B", item_id="q_00011_64k", context_length="64K", **ar,
                     response="insufficient evidence", verdict=True),
    ]
    write_jsonl(root / "predictions" / "a" / "predictions_8k.jsonl", a_lines[::2][:1] + [a_lines[2]])
    write_jsonl(root / "predictions" / "a" / "predictions_64k.jsonl.gz", [a_lines[1], a_lines[3]], gz=True)
    write_jsonl(root / "predictions" / "b" / "all.jsonl", b_lines)
    items = [
        "item_id,question_id,context_length,family_id,evidence_type,memory_operation,subtype,expected_response,paired_question_id",
        "q_00010_8k,q_00010,8K,fam_00009,speaker_information,information_extraction,cue_to_fact,answer,",
        "q_00010_64k,q_00010,64K,fam_00009,speaker_information,information_extraction,cue_to_fact,answer,",
        "q_00011_8k,q_00011,8K,fam_00009,speaker_information,answer_refusal,cue_to_fact,insufficient_evidence,q_00010",
        "q_00011_64k,q_00011,64K,fam_00009,speaker_information,answer_refusal,cue_to_fact,insufficient_evidence,q_00010",
    ]
    (root / "items.csv").write_text("\n".join(items) + "\n")
    (root / "models.csv").write_text(
        "model,family,access,architecture,llm_params_b,total_params_b,in_64k_set,order\n"
        "Model-A,Fam,proprietary,api,,,true,1\nModel-B,Other,open_weight,omni_modal,7.6,8.0,true,2\n")
    return root


@pytest.fixture(scope="session")
def made_once(tmp_path_factory, worker_id):
    """``made_once(name, make)``: the folder ``name``, made by ``make(folder)`` once per test session even
    under pytest-xdist (its documented recipe: the workers' common base temporary folder and a file lock).
    For expensive results such as a ``reproduce`` run: tests only read it; a test that changes it copies
    it first (``shutil.copytree``)."""
    import shutil

    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    root = (root if worker_id == "master" else root.parent) / "made-once"
    root.mkdir(parents=True, exist_ok=True)

    def get(name: str, make) -> Path:
        folder, done = root / name, root / f"{name}.done"
        with FileLock(str(root / f"{name}.lock")):
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                make(folder)
                done.touch()
        return folder

    return get


@pytest.fixture(scope="session")
def my_eval_report(made_once) -> Path:
    """README.md's ``voxmem-analysis reproduce --data data/examples/my_eval --out /tmp/my_eval_report`` run once
    as written (with the README test's smaller bootstrap), its /tmp/ paths in this folder; ``result.json``
    holds its argv, exit code and printed text.  Read only."""
    from test_readme_examples import MY_EVAL_REPRODUCE, run_as_written

    def make(folder: Path) -> None:
        folder.mkdir(parents=True)
        argv, proc = run_as_written(MY_EVAL_REPRODUCE, folder)
        (folder / "result.json").write_text(json.dumps({"argv": argv, "returncode": proc.returncode,
                                                        "stdout": proc.stdout, "stderr": proc.stderr}))

    return made_once("readme-my-eval-report", make)


@pytest.fixture(scope="session")
def synthetic_scaling_explorer_run(made_once) -> Path:
    """``reproduce`` of notebooks 20 and 50 on data/synthetic (seed 0, n_boot 50, two jobs), made once: read only."""
    from voxmem_analysis.reproduce import runner

    def make(folder: Path) -> None:
        s = runner.run(SYNTHETIC, folder, jobs=2, seed=0, n_boot=50, only=["20_context_scaling", "50_subtype_explorer"],
                       progress=False, stream=io.StringIO())
        assert not s.failed, [nb.error for nb in s.failed]

    return made_once("synthetic-20-50", make)


def scored_at_every_budget(release):
    """Independent rebuild of the Table 18 / scaling-model selection from the raw frame (pandas):
    the 64K set, scored rows, and per model the questions scored at all four budgets."""
    fr = release.frame.to_pandas()
    fr = fr[fr["model"].isin(release.models_in_64k_set()) & fr["scored"]].copy()
    fr["budget"] = fr["budget"].astype(str)
    have = fr.groupby(["model", "question_id"])["budget"].nunique()
    full = have[have == 4].reset_index()[["model", "question_id"]]
    return fr.merge(full, on=["model", "question_id"])


def write_artifact_tables(release, out: Path, names, **params) -> Path:
    """What the notebooks write for ``reproduction.csv``: ``out/tables/NAME.long.csv`` (and the CSV) of
    each artifact in ``names``, computed from ``release`` with ``params``."""
    from voxmem_analysis import artifacts, output

    for name in dict.fromkeys(names):
        output.save_table(artifacts.compute(name, release, **params), out, name, formats=("csv",), show=False)
    return out


@pytest.fixture(scope="session")
def budget_subset(tmp_path_factory):
    """``budget_subset(("8K", "16K"))``: three models of ``data/synthetic`` at those budgets only, with the
    second judge and the ablation (built once per session; :mod:`shapes`)."""
    import shapes
    from voxmem_analysis import load_release

    built = {}

    def build(budgets: tuple):
        if budgets not in built:
            name = "subset_" + "_".join(budgets)
            models = {m: m for m in ("Gemini-3.1-Pro", "Gemma-4-E4B-it", "Qwen3-Omni-30B-A3B")}
            shapes.SHAPES[name] = shapes.Shape(f"three models at {', '.join(budgets)}", models, budgets=budgets,
                                               every=12, parts=("judge2", "ablation"))
            built[budgets] = load_release(shapes.build(name, tmp_path_factory.mktemp(name)))
        return built[budgets]

    return build
