"""The HTML report of a reproduction run, ``OUT/report/index.html``, from the templates ``report.html`` and
``report/*.html``, reading only files of ``OUT`` (so ``reproduce --report-only`` rebuilds it any time).  Mode
``paper`` shows the scoreboard and the audit of the paper; ``analysis`` the user's runs, the paper's numbers as
labelled reference columns only.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

from voxmem_analysis import __version__
from voxmem_analysis.output import read_findings
from voxmem_analysis.reproduce.provenance import grouped
from voxmem_analysis.reproduce.published import published
from voxmem_analysis.reproduce.reference import accuracy_reference, retention_reference
from voxmem_analysis.reproduce.notebook import display_path
from voxmem_analysis.reproduce.report_html import natural_key, num, read_csv, render, signed, table_view, truthy
from voxmem_analysis.reproduce.report_outputs import (captions, figures_view, paper_order_table15, provenance_flags,
                                                      provenance_view, registry_title, tables_view)

__all__ = ["write_report", "render_report", "read_run", "captions", "paper_order_table15", "report_mode_of"]


def _status(row) -> tuple[int, str, str]:
    """(sort key, css class, label) of a reproduction row: failures first."""
    if row.get("status") == "paper_inconsistent":
        return 1, "warn", "paper inconsistent"
    if row["reproduced"] is None or (isinstance(row["reproduced"], float) and math.isnan(row["reproduced"])):
        return 1, "missing", "not reproduced"
    if truthy(row["within_tolerance"]):
        return 2, "ok", "within"
    return 0, "fail", "outside"


def _artifacts(recs: list[dict]) -> list[dict]:
    """One group per artifact of the reproduction rows ``recs``, worst first, failing rows first."""
    groups: dict[str, list[dict]] = {}
    for r in recs:
        groups.setdefault(str(r["artifact"]), []).append(r)
    out = []
    for i, (art, rows) in enumerate(groups.items()):
        rows = sorted(((_status(r), r) for r in rows), key=lambda t: t[0][0])
        shown = [{"css": css, "label": label, "row": r["row"], "column": r["column"], "published": num(r["published"]),
                  "reproduced": num(r["reproduced"]), "delta": signed(r["delta"]), "kind": r["kind"],
                  "note": r.get("note")} for (_, css, label), r in rows]
        fail, miss, inc = (sum(s[0] == 0 for s, _ in rows), sum(s[1] == "missing" for s, _ in rows),
                           sum(s[1] == "warn" for s, _ in rows))
        out.append({"name": art, "title": registry_title(art), "rows": shown, "n": len(rows), "fail": fail,
                    "miss": miss, "inconsistent": inc, "issues": fail + miss + inc, "order": i,
                    "cls": "has-fail" if fail else ("has-missing" if miss or inc else "")})
    return sorted(out, key=lambda a: (-a["issues"], a["order"]))


def _reproduction_section(run: dict, repro) -> dict:
    rp = run.get("reproduction") or {}
    if repro is None:
        return {"missing_file": True, "error": rp.get("error", "")}
    errors = rp.get("artifact_errors") or {}
    recs = repro.to_dict("records")
    amc = [r for r in recs if str(r["artifact"]).startswith("amc_")]
    if amc and len(amc) < len(recs):
        parts = [{"heading": "VoxMem", "amc": False,
                  "artifacts": _artifacts([r for r in recs if not str(r["artifact"]).startswith("amc_")])},
                 {"heading": "Audio MultiChallenge", "amc": True, "artifacts": _artifacts(amc)}]
    else:
        parts = [{"heading": None, "amc": False, "artifacts": _artifacts(recs)}]
    return {"missing_file": False, "by_kind": sorted((rp.get("by_kind") or {}).items()), "parts": parts,
            "missing": [(a, n, errors.get(a)) for a, n in (rp.get("missing_artifacts") or {}).items()]}


def _audit_section(run: dict, audit) -> dict:
    if audit is None:
        return {"missing_file": True, "error": (run.get("audit") or {}).get("error", "")}
    cols = [c for c in ("identity", "artifact", "description", "relation", "lhs", "rhs", "delta", "tolerance", "holds",
                        "detail") if c in audit.columns]
    recs = [{"holds": truthy(r.get("holds")), "artifact": str(r.get("artifact")),
             "cells": {c: num(r.get(c), 4) if c in ("lhs", "rhs", "delta", "tolerance") else r.get(c) for c in cols}}
            for r in audit.to_dict("records")]
    by_art: dict[str, list[dict]] = {}
    for r in recs:
        by_art.setdefault(r["artifact"], []).append(r)
    arts = [{"name": a, "n": len(rs), "fail": sum(not r["holds"] for r in rs), "rows": sorted(rs, key=lambda r: r["holds"])}
            for a, rs in sorted(by_art.items(), key=lambda kv: natural_key(kv[0]))]
    return {"missing_file": False, "n": len(recs), "cols": cols, "fails": [r for r in recs if not r["holds"]],
            "by_artifact": arts, "summary": sorted(arts, key=lambda a: (a["fail"] == 0, natural_key(a["name"])))}


def _reference_section(out: Path) -> dict:
    fig4, fig6 = read_csv(out / "tables" / "fig4.csv"), read_csv(out / "tables" / "fig6.csv")
    if fig4 is None:
        return {"no_fig4": True}
    pub = published()
    ret = retention_reference(fig6, pub)
    return {"no_fig4": False, "retention": None if ret is None else table_view(ret),
            "accuracy": [(b, table_view(t), any(str(c).startswith("paper") for c in t.columns))
                         for b, t in accuracy_reference(fig4, pub)]}


def _findings_section(out: Path, flags: dict) -> dict:
    """Every finding the notebooks saved (``OUT/findings/NAME.json``): this release's sentence, the paper's."""
    found = read_findings(out)
    groups = [{"name": name, "entries": [{k: r.get(k) for k in ("topic", "release", "paper")} for r in found[name]],
               "warn": sorted({w for f in flags.get(f"findings/{name}.json", ()) for w in f.what})}
              for name in sorted(found, key=natural_key)]
    return {"groups": groups if any(found.values()) else []}


def report_mode_of(run: dict) -> str:
    """``analysis`` when run.json says so (a release that is not the paper's), else ``paper``."""
    return "analysis" if (run.get("release") or {}).get("mode") == "analysis" else "paper"


def read_run(out: Path) -> tuple[dict, str | None]:
    """``OUT/run.json`` (an empty run when there is none), and why it could not be read when it is unreadable."""
    path = Path(out) / "run.json"
    empty = {"notebooks": [], "data_dir": "?", "out_dir": str(out)}
    if not path.exists():
        return empty, None
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(run, dict):
            return run, None
        why = f"holds a JSON {type(run).__name__}, not an object"
    except (OSError, ValueError, RecursionError) as exc:
        why = f"{type(exc).__name__}: {exc}"
    return empty, f"{path} could not be read ({why}): the run summary and release details are missing."


_HEADINGS = {"run": "Run summary", "findings": "Findings", "reproduction": "Published vs reproduced numbers",
             "audit": "Consistency audit of the paper's numbers", "validation": "Validation of the release",
             "figures": "Figures", "tables": "Tables", "provenance": "Provenance", "runs": "Your runs",
             "reference": "The paper's numbers, for reference", "skipped": "Skipped sections"}
_ORDER = {"paper": ("run", "findings", "reproduction", "audit", "validation", "figures", "tables", "provenance"),
          "amc": ("run", "findings", "reproduction", "validation", "figures", "tables", "provenance"),
          "analysis": ("runs", "findings", "figures", "tables", "reference", "skipped", "validation", "provenance",
                       "run")}


def _sections(mode: str, run: dict, out: Path, embed: bool) -> tuple[list[dict], list]:
    """The page's sections in order with what their templates show beyond run.json; the outputs made otherwise."""
    flags, found, bad_record = provenance_flags(out, run)
    caps = captions(out)
    build = {
        "findings": lambda: _findings_section(out, flags),
        "reproduction": lambda: _reproduction_section(run, _read(out / "reproduction.csv")),
        "audit": lambda: _audit_section(run, _read(out / "audit.csv")),
        "figures": lambda: {"groups": figures_view(run, out, embed, caps, flags)},
        "tables": lambda: {"groups": tables_view(run, out, caps, flags)},
        "provenance": lambda: provenance_view(out, found, bad_record), "reference": lambda: _reference_section(out)}
    return [{"anchor": a, "heading": _HEADINGS[a], **build.get(a, dict)()} for a in _ORDER[mode]], found


def _read(path: Path):
    df = read_csv(path)
    return None if df is None else df.astype(object).where(df.notna(), None)


def render_report(out_dir, *, embed: bool = False) -> str:
    """The report page of the output folder ``out_dir`` as HTML text (``embed``: figures inlined)."""
    out = Path(out_dir)
    run, unreadable = read_run(out)
    rel = run.get("release") or {}
    mode = report_mode_of(run)
    if mode == "analysis":
        title = f"VoxMem analysis report: {', '.join(rel.get('model_names') or []) or '?'}"
    elif rel.get("benchmark") == "audio-multichallenge":
        mode, title = "amc", f"Audio MultiChallenge reproduction report: {rel.get('name') or '?'}"
    else:
        title = "VoxMem reproduction report"
    sections, found = _sections(mode, run, out, embed)
    command = (f"voxmem-analysis reproduce --data {display_path(run.get('data_dir'))} --out "
               f"{display_path(run.get('out_dir'))} --seed {run.get('seed')} --n-boot {run.get('n_boot')}")
    return render("report.html", title=title, mode=mode, synthetic=bool(rel.get("synthetic")), run=run, rel=rel,
                  unreadable=unreadable, sections=sections, not_made_here=len(grouped(found)) if found else 0,
                  version=__version__, command=command)


def write_report(out_dir, *, embed: bool = False) -> Path:
    """Write ``out_dir/report/index.html`` from the files of ``out_dir`` (``embed``: figures inlined, one file to
    share); its path."""
    out = Path(out_dir)
    path = out / "report" / "index.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    html = render_report(out, embed=embed)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")   # a reader never sees half a page
    try:
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
