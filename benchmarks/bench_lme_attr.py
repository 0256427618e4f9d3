"""Loading time of the LongMemEval and error-attribution readers: the shipped LongMemEval example,
a replicated copy (every verdict file 90 times, ~5,400 lines a file: the columnar path), the synthetic
release's audit records and a 3x copy (7,125 records).  Prints the best of ``--repeat`` runs of each;
``--save FILE`` writes them, ``--against FILE`` prints the ratio new/old per input.

    .venv/bin/python benchmarks/bench_lme_attr.py --save /tmp/before.json     # on the old code
    .venv/bin/python benchmarks/bench_lme_attr.py --against /tmp/before.json  # on the new code
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if "--code" in sys.argv:          # another checkout's voxmem_analysis (e.g. the code before a change)
    sys.path.insert(0, sys.argv[sys.argv.index("--code") + 1])
from tests import reader_cases as C  # noqa: E402
from voxmem_analysis.io.voxmem.attribution import drop_duplicate_records, read_audit_files  # noqa: E402
from voxmem_analysis.io import load_longmemeval  # noqa: E402


def best(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--save")
    ap.add_argument("--against")
    ap.add_argument("--code", help="folder holding the voxmem_analysis package to time")
    a = ap.parse_args()
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, build in (("lme example", C.LME_CASES["clean"]), ("lme x90", C.LME_CASES["big_clean"])):
            d = tmp / name.replace(" ", "_")
            d.mkdir()
            man, q, _ = build(d)
            res[name] = best(lambda: load_longmemeval(man, q, strict=False), a.repeat)
        for name, build in (("attribution", C.ATTR_CASES["clean"]), ("attribution x3", C.ATTR_CASES["big_clean"])):
            d = tmp / name.replace(" ", "_")
            d.mkdir()
            root = build(d)
            res[name] = best(lambda: drop_duplicate_records(*read_audit_files(root)), a.repeat)
    old = json.loads(Path(a.against).read_text()) if a.against else {}
    for k, v in res.items():
        print(f"{k:16s} {v * 1000:9.1f} ms" + (f"   old {old[k] * 1000:9.1f} ms   new/old {v / old[k]:.2f}" if k in old else ""))
    if a.save:
        Path(a.save).write_text(json.dumps(res))


if __name__ == "__main__":
    main()
