"""The table ``reproduce`` prints at the end: notebooks, release, scoreboard, audit, validation, provenance."""
from __future__ import annotations

import sys
from pathlib import Path

from voxmem_analysis.reproduce.notebook import outputs_brief

__all__ = ["print_summary"]


def _notebook_rows(summary, w) -> None:
    """The table of notebooks: status, time, outputs, and under each its reason, error or skipped sections."""
    rows = summary.notebooks
    width = max([len(r.name) for r in rows] + [8])
    w(f"\n{'notebook':<{width}}  {'status':<7}  {'seconds':>7}  outputs written\n")
    w(f"{'-' * width}  {'-' * 7}  {'-' * 7}  {'-' * 30}\n")
    for r in rows:
        status = r.status.upper() if r.status == "failed" else r.status
        w(f"{r.name:<{width}}  {status:<7}  {r.seconds:>7.1f}  {outputs_brief(r.outputs)}\n")
        if r.status == "skipped":
            w(f"{'':<{width}}    {r.reason}\n")
        elif r.status == "ok" and r.sections_skipped:
            w(f"{'':<{width}}    sections skipped: " + "; ".join(f"{s} ({why})" for s, why in r.sections_skipped) + "\n")
        if r.error is not None:
            w(f"{'':<{width}}    {r.error.headline()}\n")
            for line in r.error.source.splitlines()[:6]:
                w(f"{'':<{width}}    | {line}\n")
            if r.executed:
                w(f"{'':<{width}}    executed notebook: {Path(summary.out_dir) / r.executed}\n")
        for c in r.collisions:
            w(f"{'':<{width}}    warning: {c}\n")
    w("\n")


def print_summary(summary, stream=None) -> None:
    """The table printed at the end of ``reproduce``."""
    w = (stream or sys.stdout).write
    rows = summary.notebooks
    _notebook_rows(summary, w)
    rel = summary.release or {}
    if rel.get("error"):
        w(f"release {summary.data_dir}: could not be loaded: {rel['error']}\n")
    elif rel:
        amc = rel.get("benchmark") == "audio-multichallenge"
        k = rel.get("models")
        what = ("model x output-modality system" if amc else "model") + ("" if k == 1 else "s")
        w(f"release: {rel.get('label')} ({rel.get('predictions')} {'rubric verdicts' if amc else 'predictions'}, "
          f"{k} {what})\n")
        if rel.get("mode") == "analysis":
            w(f"report mode: analysis of your runs ({', '.join(rel.get('model_names') or [])}); not the paper's "
              f"release, so no reproduction scoreboard or paper audit (--compare-published adds them)\n")
    rp = summary.reproduction or {}
    if rp.get("error"):
        w(f"reproduction.csv: FAILED: {rp['error']}\n")
    elif rp.get("numbers") is not None:
        w(f"reproduction.csv: {rp['numbers']} published numbers, {rp['within']} within tolerance, "
          f"{rp['outside']} outside, {rp['missing']} not reproduced"
          + (f", {rp['paper_inconsistent']} known paper inconsistenc{'y' if rp['paper_inconsistent'] == 1 else 'ies'}"
             if rp.get("paper_inconsistent") else "")
          + (f" ({rp['seconds']:.1f} s" + (", with audit.csv)" if summary.audit else ")") if rp.get("seconds") else "")
          + "\n")
        by_bench = rp.get("by_benchmark") or {}
        for b, c in (by_bench.items() if len(by_bench) > 1 else ()):
            w(f"  {'Audio MultiChallenge' if b == 'amc' else 'VoxMem'}: {c['within']}/{c['numbers']} within tolerance"
              + (f", {c['paper_inconsistent']} known paper inconsistency" if c.get("paper_inconsistent") else "") + "\n")
        for note in rp.get("inconsistent_notes") or ():
            w(f"  paper inconsistency: {note}\n")
        if rp.get("missing_artifacts"):
            w("  not reproduced: " + "; ".join(f"{a} ({n})" for a, n in rp["missing_artifacts"].items()) + "\n")
        for a, e in (rp.get("artifact_errors") or {}).items():
            w(f"  {a}: {e}\n")
    au = summary.audit or {}
    if au.get("error"):
        w(f"audit.csv: FAILED: {au['error']}\n")
    elif au:
        w(f"audit.csv: {au['identities']} identities, {au['hold']} hold, {au['fail']} fail\n")
    errs = sum(p["count"] for p in summary.problems if p["severity"] == "error")
    warns = sum(p["count"] for p in summary.problems if p["severity"] == "warning")
    kinds = sorted({f"{p['severity']} {p['code']}" for p in summary.problems})
    if summary.problems or rel:
        w(f"validation: {errs} error(s), {warns} warning(s)"
          + (f" [{'; '.join(kinds)}] (voxmem-analysis validate lists them)" if kinds else "") + "\n")
    for f in summary.provenance[:10]:
        w(f"provenance: {f}\n")
    if len(summary.provenance) > 10:
        w(f"provenance: ... and {len(summary.provenance) - 10} more (OUT/provenance.json, the report)\n")
    for t in summary.tasks_failed:
        w(f"FAILED task {t}\n")
    if (Path(summary.out_dir) / "report" / "index.html").exists():
        w(f"report: {Path(summary.out_dir) / 'report' / 'index.html'}\n")
    n_ok = sum(r.status == "ok" for r in rows)
    n_skip = sum(r.status == "skipped" for r in rows)
    w(f"{n_ok} of {len(rows)} notebooks ok, {n_skip} skipped, {len(summary.failed)} failed; "
      f"wall time {summary.wall_seconds:.1f} s\n")
