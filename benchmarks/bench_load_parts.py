"""Time the readers of the other inputs on both paths: row by row (``bulk=False``) and columnar.

    .venv/bin/python benchmarks/bench_load_parts.py [--repeat 3] [--scale 10]

Readers: the Audio MultiChallenge release (``load_amc`` on data/synthetic-amc), the
error-attribution audit records (``read_audit_files`` on data/synthetic's attribution/) and
LongMemEval verdicts (``load_longmemeval`` on data/examples/longmemeval), each at 1x and on a copy
replicated ``--scale`` times (built once under benchmarks/.cache/; every id is prefixed per copy,
so the copy is as clean as the original).  Prints the median of ``--repeat`` runs per path and
the ratio (row by row / columnar: above 1 the columnar path is faster).  Not a test: the numbers
depend on the machine and its load.  All inputs are synthetic.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import statistics
import time
from pathlib import Path

import voxmem_analysis.io.voxmem.attribution as attribution_io
import voxmem_analysis.io.longmemeval as longmemeval_io
from voxmem_analysis.io import load_amc
from voxmem_analysis.io.voxmem.attribution import read_audit_files
from voxmem_analysis.io import load_longmemeval

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(__file__).resolve().parent / ".cache"


# ----------------------------------------------------------------------------- replicated copies
def _replicate_csv(src: Path, dst: Path, scale: int, id_cols: tuple[str, ...]) -> None:
    with src.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows, fields = list(reader), reader.fieldnames
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for k in range(scale):
        for r in rows:
            writer.writerow({c: (f"x{k}-{v}" if c in id_cols and v else v) for c, v in r.items()})
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(out.getvalue(), encoding="utf-8")


def amc_copy(scale: int) -> Path:
    """data/synthetic-amc with every task and rubric present ``scale`` times (ids prefixed)."""
    src, dst = ROOT / "data" / "synthetic-amc", CACHE / f"synthetic-amc_x{scale}"
    if (dst / "release.json").is_file():
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    for path in sorted(src.rglob("*.csv")):
        _replicate_csv(path, dst / path.relative_to(src), scale, ("task_id", "rubric_id"))
    shutil.copy(src / "release.json", dst / "release.json")
    return dst


def attribution_copy(scale: int) -> Path:
    """data/synthetic's attribution/ records ``scale`` times (item ids prefixed)."""
    src, dst = ROOT / "data" / "synthetic" / "attribution", CACHE / f"attribution_x{scale}"
    if (dst / "attribution").is_dir():
        return dst
    for path in sorted(src.rglob("*.jsonl")):
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        out = [json.dumps({**r, "item_id": f"x{k}-{r['item_id']}"}, ensure_ascii=False)
               for k in range(scale) for r in lines]
        target = dst / "attribution" / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return dst


def longmemeval_copy(scale: int) -> Path:
    """data/examples/longmemeval with every question ``scale`` times (ids prefixed), so each
    verdict file is ``scale`` times as long."""
    src, dst = ROOT / "data" / "examples" / "longmemeval", CACHE / f"longmemeval_x{scale}"
    if (dst / "manifest.csv").is_file():
        return dst
    (dst / "verdicts").mkdir(parents=True, exist_ok=True)
    questions = json.loads((src / "questions.json").read_text(encoding="utf-8"))
    (dst / "questions.json").write_text(json.dumps(
        [{**q, "question_id": f"x{k}-{q['question_id']}"} for k in range(scale) for q in questions]), encoding="utf-8")
    for path in sorted((src / "verdicts").iterdir()):
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        (dst / "verdicts" / path.name).write_text("".join(
            json.dumps({**r, "question_id": f"x{k}-{r['question_id']}"}) + "\n" for k in range(scale) for r in lines),
            encoding="utf-8")
    shutil.copy(src / "manifest.csv", dst / "manifest.csv")
    return dst


# ----------------------------------------------------------------------------- timing
def _median(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def readers(scale: int) -> list[tuple[str, str, object]]:
    amc, att, lme = ROOT / "data" / "synthetic-amc", ROOT / "data" / "synthetic", ROOT / "data" / "examples" / "longmemeval"
    cases = [("1x", amc, att, lme)]
    if scale > 1:
        cases.append((f"{scale}x", amc_copy(scale), attribution_copy(scale), longmemeval_copy(scale)))
    out = []
    for label, a, b, c in cases:
        out.append(("load_amc", label, lambda bulk, a=a: load_amc(a, bulk=bulk)))
        out.append(("read_audit_files", label, lambda bulk, b=b: read_audit_files(b, bulk=bulk)))
        out.append(("load_longmemeval", label, lambda bulk, c=c: load_longmemeval(
            c / "manifest.csv", c / "questions.json", bulk=bulk)))
    return out


def _forced(fn):
    """``fn(True)`` with the columnar path taken for files of any size (by default the attribution
    and LongMemEval readers take it only for files of BULK_MIN_LINES lines or more)."""
    saved = attribution_io.BULK_MIN_LINES, longmemeval_io.BULK_MIN_LINES
    attribution_io.BULK_MIN_LINES = longmemeval_io.BULK_MIN_LINES = 0
    try:
        return fn(True)
    finally:
        attribution_io.BULK_MIN_LINES, longmemeval_io.BULK_MIN_LINES = saved


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", type=int, default=10)
    args = ap.parse_args(argv)
    print("SYNTHETIC inputs; median of", args.repeat, "runs (wall s); ratio = row by row / columnar")
    print("'default' is bulk=True as shipped; 'forced' takes the columnar path for every file")
    print(f"{'reader':18} {'size':>5} {'row by row':>11} {'default':>9} {'ratio':>6} {'forced':>9} {'ratio':>6}")
    for name, label, fn in readers(args.scale):
        fn(True)   # warm: imports, file cache
        slow = _median(lambda: fn(False), args.repeat)
        fast = _median(lambda: fn(True), args.repeat)
        forced = fast if name == "load_amc" else _median(lambda: _forced(fn), args.repeat)
        print(f"{name:18} {label:>5} {slow:11.4f} {fast:9.4f} {slow / fast:6.2f} {forced:9.4f} {slow / forced:6.2f}")


if __name__ == "__main__":
    main()
