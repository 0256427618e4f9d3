"""Time the readers of the other inputs (one path each): the Audio MultiChallenge release and runs, the
error-attribution audit records and LongMemEval verdicts, at 1x and on copies replicated ``--scale``
times (built once under benchmarks/.cache/; every id prefixed per copy, so a copy is as clean as the
original).  Prints the best of ``--repeat`` runs; ``--save FILE`` keeps them and ``--against FILE``
prints new/old per input; ``--code DIR`` times another checkout's package (e.g. the code before a
change).  Not a test: the numbers depend on the machine and its load.  All inputs are synthetic.

    .venv/bin/python benchmarks/bench_load_parts.py --code /path/to/old --save /tmp/before.json
    .venv/bin/python benchmarks/bench_load_parts.py --against /tmp/before.json
"""
from __future__ import annotations

import argparse
import csv
import importlib
import io
import json
import shutil
import sys
import time
from pathlib import Path

if "--code" in sys.argv:          # another checkout's voxmem_analysis (e.g. the code before a change)
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])


def _reader(name: str, *old: str):
    """A loader from ``voxmem_analysis.io`` (or, in older code, from the module that held it)."""
    for module in ("voxmem_analysis.io", *old):
        found = getattr(importlib.import_module(module), name, None)
        if found is not None:
            return found
    raise ImportError(name)


load_amc = _reader("load_amc", "voxmem_analysis.io.amc")
load_amc_runs = _reader("load_amc_runs", "voxmem_analysis.io.amc_runs")
load_longmemeval = _reader("load_longmemeval", "voxmem_analysis.io.longmemeval")
read_audit_files = _reader("read_audit_files", "voxmem_analysis.io.voxmem.attribution", "voxmem_analysis.io.attribution")

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
def best(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def readers(scale: int) -> list[tuple[str, object]]:
    amc, att, lme = ROOT / "data" / "synthetic-amc", ROOT / "data" / "synthetic", ROOT / "data" / "examples" / "longmemeval"
    runs = ROOT / "data" / "examples" / "amc_run"
    cases = [("1x", amc, att, lme)] + ([(f"{scale}x", amc_copy(scale), attribution_copy(scale), longmemeval_copy(scale))]
                                       if scale > 1 else [])
    out = [("load_amc_runs 1x", lambda: load_amc_runs(runs / "manifest.csv", runs / "tasks.jsonl", strict=False))]
    for label, a, b, c in cases:
        out += [(f"load_amc {label}", lambda a=a: load_amc(a, strict=False)),
                (f"read_audit_files {label}", lambda b=b: read_audit_files(b)),
                (f"load_longmemeval {label}", lambda c=c: load_longmemeval(c / "manifest.csv", c / "questions.json",
                                                                           strict=False))]
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--save")
    ap.add_argument("--against")
    ap.add_argument("--code", help="folder holding the voxmem_analysis package to time")
    args = ap.parse_args(argv)
    old = json.loads(Path(args.against).read_text()) if args.against else {}
    res = {}
    print(f"SYNTHETIC inputs; best of {args.repeat} runs (wall ms)")
    for name, fn in readers(args.scale):
        fn()   # warm: imports, file cache
        res[name] = best(fn, args.repeat)
        print(f"{name:28s} {res[name] * 1000:9.1f}" + (f"   old {old[name] * 1000:9.1f}   new/old {res[name] / old[name]:.2f}"
                                                      if name in old else ""))
    if args.save:
        Path(args.save).write_text(json.dumps(res))


if __name__ == "__main__":
    main()
