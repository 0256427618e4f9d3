"""The HTML report of a reproduction run: ``OUT/report/index.html``.

:func:`write_report` reads only files of the output folder -- ``run.json`` (written by
:func:`voxmem_analysis.reproduce.runner.run`), ``reproduction.csv``, ``audit.csv``, ``figures/*.png``
and ``tables/*.csv`` -- so a report can be rebuilt at any time without re-running anything
(``voxmem-analysis reproduce --report-only --out DIR``).

The page is plain HTML with one inlined stylesheet (``resources/report.css``) and no
JavaScript, in one of two modes (``run.json`` ``release.mode``, see
:mod:`voxmem_analysis.reproduce.mode`):

* ``paper`` (the paper's release, or ``--compare-published``): a banner naming the data (and,
  for a synthetic release, that it is SYNTHETIC, not real model output); summary cards; the run
  summary with each failing notebook's error cell; the findings; the published-vs-reproduced
  numbers grouped by artifact, failures first (an artifact with problems is open, showing only
  those rows when it has more than :data:`OPEN_ROWS`); the consistency audit of the paper's own
  numbers; the release's validation problems; the figures and the tables.
* ``analysis`` (any other release): the banner; "your runs" (models x budgets, counts,
  accuracies); the findings; the figures and tables; the paper's published numbers as labelled
  reference columns where comparable (:mod:`voxmem_analysis.reproduce.reference`); the skipped
  notebooks and sections with their reasons; validation; the run summary.  No scoreboard, no audit.

The findings are the sentences the notebooks computed from this release's tables
(``OUT/findings/NAME.json``, :mod:`voxmem_analysis.analysis.findings`), each followed by the paper's
own finding, labelled as the paper's: the report states nothing about the data it did not compute.
Numbers are printed as the saved tables print them (:func:`voxmem_analysis.output.cell_formats`:
counts as integers, p-values below 0.001 in scientific notation, the paper's precision for the
artifacts it publishes) and never wrap; tables and figures are in natural order (``table2`` before
``table13``).

Every figure and table is captioned "Figure N: ..." / "Table N: ..." as in the paper
(:func:`captions`; outputs the paper does not number get "Figure S1" ...); wide figures span
the page; tables of at most 20 rows are open; Table 15 is shown in the paper's order.  Figures
are linked relatively (``../figures/NAME.png``), so the folder can be moved as a whole, or
inlined as base64 with ``embed=True`` (``--embed``) so the one HTML file can be shared.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from string import Template

from voxmem_analysis.reproduce.report_html import (OPEN_ROWS, display_path, esc, html_number, natural_key, num, read_csv,
                                                   resource, signed, table_html, truthy)
from voxmem_analysis.reproduce.report_outputs import (captions, figures_section, paper_order_table15,
                                                      provenance_flags, provenance_section, registry_title,
                                                      tables_section)

__all__ = ["write_report", "render_report", "read_run", "captions", "paper_order_table15", "report_mode_of"]


def _banner(run: dict) -> str:
    rel = run.get("release") or {}
    data = display_path(rel.get("path") or run.get("data_dir"))
    name = rel.get("name") or Path(run.get("data_dir", "?")).name
    params = f"seed {run.get('seed')}, {run.get('n_boot')} bootstrap resamples"
    if rel.get("error"):
        return (f'<div class="banner synthetic"><span class="tag">DATA NOT LOADED</span>'
                f'Made from <code>{esc(data)}</code>, which could not be loaded: {esc(rel["error"])}</div>')
    if rel.get("synthetic"):
        return (f'<div class="banner synthetic"><p><span class="tag">SYNTHETIC DATA</span>'
                f'<b>This report was made from the synthetic release <code>{esc(data)}</code> ({esc(name)}): '
                f'SYNTHETIC data, not real model output.</b></p>'
                f'<p>Its verdicts were generated, not produced by any model{esc(_desc(rel))}. '
                + ('Agreement with the paper below shows that the analysis code gives back the published numbers '
                   'from data built to contain them; it is not evidence about any real model. '
                   if rel.get("mode") != "analysis" else 'Nothing in it is evidence about any real model. ')
                + f'{esc(params)}.</p></div>')
    return (f'<div class="banner"><p><span class="tag real">DATA</span>Made from the release '
            f'<code>{esc(data)}</code> ({esc(name)}). {esc(rel.get("description") or "")}</p>'
            f'<p>{esc(params)}.</p></div>')


def _desc(rel: dict) -> str:
    d = (rel.get("description") or "").strip().rstrip(".")
    return f" ({d})" if d else ""


def _cards(run: dict, repro, audit, found=()) -> str:
    nbs = run.get("notebooks", [])
    n_ok = sum(nb["status"] == "ok" for nb in nbs)
    n_fail = sum(nb["status"] == "failed" for nb in nbs)
    n_skip = sum(nb["status"] == "skipped" for nb in nbs)
    cards = [("bad" if n_fail else "ok", f"{n_ok}/{len(nbs)}", "notebooks ran",
              f"{n_fail} failed, {n_skip} skipped; wall time {run.get('wall_seconds', 0):.1f} s")]
    runs = (run.get("release") or {}).get("runs") or []
    if (run.get("release") or {}).get("mode") == "analysis" and runs:
        ms = list(dict.fromkeys(r["model"] for r in runs))
        bs = list(dict.fromkeys(r["budget"] for r in runs))
        cards.append(("ok", f"{len(ms)} \u00d7 {len(bs)}", "models \u00d7 budgets run",
                      f"{', '.join(ms[:4])}{' ...' if len(ms) > 4 else ''} at {', '.join(bs)}"))
    rp = run.get("reproduction") or {}
    if rp.get("numbers") is not None:
        bad = rp["outside"] + rp["missing"]
        cards.append(("bad" if bad else "ok", f"{rp['within']}/{rp['numbers']}", "published numbers reproduced",
                      f"{rp['outside']} outside tolerance, {rp['missing']} not reproduced"))
    elif rp.get("error"):
        cards.append(("bad", "error", "reproduction.csv", rp["error"]))
    if rp.get("paper_inconsistent"):
        cards.append(("warn", f"{rp['paper_inconsistent']}", "known paper inconsistencies",
                      "printed numbers the paper contradicts itself on (status paper_inconsistent); not failures"))
    au = run.get("audit") or {}
    if au.get("identities") is not None:
        cards.append(("warn" if au.get("fail") else "ok", f"{au.get('hold')}/{au['identities']}",
                      "paper identities hold", f"{au.get('fail')} fail (within rounding)"))
    elif au.get("error"):
        cards.append(("bad", "error", "audit", au["error"]))
    probs = run.get("problems") or []
    errs = sum(p["count"] for p in probs if p["severity"] == "error")
    warns = sum(p["count"] for p in probs if p["severity"] == "warning")
    cards.append(("bad" if errs else ("warn" if warns else "ok"), f"{errs} / {warns}",
                  "validation errors / warnings", f"{len(probs)} distinct problem code{'' if len(probs) == 1 else 's'}"))
    if found:
        from voxmem_analysis.reproduce.provenance import grouped

        cards.append(("bad", f"{len(grouped(found))}", "outputs not made like the rest",
                      "other parameters, data or version than this run: see Provenance"))
    return '<div class="cards">' + "".join(
        f'<div class="card {k}"><div class="big">{esc(big)}</div><div>{esc(what)}</div><div class="sub">{esc(sub)}</div></div>'
        for k, big, what, sub in cards) + "</div>"


def _brief(outputs: list[str]) -> str:
    kinds: dict[str, int] = {}
    for o in outputs:
        k = o.split("/", 1)[0] if "/" in o else "other"
        kinds[k] = kinds.get(k, 0) + 1
    return f"{len(outputs)}" + (" (" + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + ")" if kinds else "")


def _run_section(run: dict) -> str:
    nbs = run.get("notebooks", [])
    rows = []
    for nb in nbs:
        links = []
        if nb.get("executed"):
            links.append(f'<a href="../{esc(nb["executed"])}">executed notebook</a>')
            links.append(f'<a href="../notebooks/{esc(nb["name"])}.log">kernel log</a>')
        note = nb.get("reason") or ""
        if not note and nb.get("sections_skipped"):
            k = len(nb["sections_skipped"])
            note = f"{k} section{'s' if k != 1 else ''} skipped: " + "; ".join(sec for sec, _ in nb["sections_skipped"])
        if nb.get("error"):
            note = f'<a href="#err-{esc(nb["name"])}">{esc(_headline(nb["error"]))}</a>'
        else:
            note = esc(note)
        rows.append(f'<tr class="{"fail" if nb["status"] == "failed" else nb["status"]}"><td><code>{esc(nb["name"])}</code></td>'
                    f'<td><span class="pill {esc(nb["status"])}">{esc(nb["status"])}</span></td>'
                    f'<td class="num">{nb.get("seconds", 0):.1f}</td><td class="num">{esc(_brief(nb.get("outputs", [])))}</td>'
                    f'<td>{" · ".join(links)}</td><td>{note}</td></tr>')
    for nb in run.get("earlier", []):
        rows.append(f'<tr class="skipped"><td><code>{esc(nb["name"])}</code></td><td><span class="pill skipped">'
                    f'earlier run</span></td><td class="num">{nb.get("seconds", 0):.1f}</td>'
                    f'<td class="num">{esc(_brief(nb.get("outputs", [])))}</td><td></td>'
                    f'<td>not re-run this time (--only); status then: {esc(nb.get("status"))}</td></tr>')
    out = ['<div class="wide"><table><tr><th>notebook</th><th>status</th><th class="num">seconds</th>'
           '<th class="num">outputs written</th><th>files</th><th>note</th></tr>', *rows, "</table></div>"]
    params = (f"data_dir={display_path(run.get('data_dir'))}, out_dir={display_path(run.get('out_dir'))}, "
              f"seed={run.get('seed')}, n_boot={run.get('n_boot')}")
    out.append(f'<p class="lead">{run.get("jobs")} parallel jobs; wall time {run.get("wall_seconds", 0):.1f} s. '
               f'Parameters set in every notebook that declares them: <code>{esc(params)}</code>.</p>')
    for t in run.get("tasks_failed", []):
        out.append(f'<div class="error"><h3>Task failed</h3><pre>{esc(t)}</pre></div>')
    for nb in nbs:
        err = nb.get("error")
        if not err:
            continue
        where = f"cell {err.get('cell_index')}" if err.get("cell_index") is not None else "no cell (kernel or conversion)"
        if err.get("line") is not None:
            where += f", line {err['line']} of <code>{esc(display_path(nb.get('path')))}</code>"
        out.append(f'<div class="error" id="err-{esc(nb["name"])}"><h3>{esc(nb["name"])} failed at {where}</h3>'
                   f'<p><b>{esc(err.get("ename"))}</b>: {esc(err.get("evalue"))}</p>'
                   + (f'<p>Cell source:</p><pre>{esc(err.get("source"))}</pre>' if err.get("source") else "")
                   + (f'<details><summary>Traceback</summary><pre>{esc(err.get("traceback"))}</pre></details>'
                      if err.get("traceback") else "") + "</div>")
        for c in nb.get("collisions", []):
            out.append(f'<p class="lead">warning: {esc(c)}</p>')
    return "\n".join(out)


def _headline(err: dict) -> str:
    where = f"cell {err.get('cell_index')}" if err.get("cell_index") is not None else "kernel"
    return f"{where}: {err.get('ename')}: {err.get('evalue')}"[:200]


def _status(row) -> tuple[int, str, str]:
    """(sort key, css class, label) of a reproduction row: failures first."""
    if row.get("status") == "paper_inconsistent":
        return 1, "warn", "paper inconsistent"
    if row["reproduced"] is None or (isinstance(row["reproduced"], float) and math.isnan(row["reproduced"])):
        return 1, "missing", "not reproduced"
    if truthy(row["within_tolerance"]):
        return 2, "ok", "within"
    return 0, "fail", "outside"


def _reproduction_section(run: dict, repro) -> str:
    rp = run.get("reproduction") or {}
    if repro is None:
        return f'<p class="lead">No reproduction.csv. {esc(rp.get("error", ""))}</p>'
    out = ['<p class="lead">One row per number the paper prints (<code>data/paper/published.csv</code>), '
           'joined on artifact, row and column with the number the notebooks computed from the release '
           '(their long-form tables, <code>tables/NAME.long.csv</code>). '
           'Tolerances and comparators come from the published table. Full table: '
           f'<a href="../reproduction.csv">reproduction.csv</a>.</p>']
    by_kind = rp.get("by_kind") or {}
    if by_kind:
        out.append("<p>By kind: " + "; ".join(f"<b>{esc(k)}</b> {v['within']}/{v['numbers']} within tolerance"
                                              for k, v in sorted(by_kind.items())) + ".</p>")
    errors = rp.get("artifact_errors") or {}
    missing = rp.get("missing_artifacts") or {}
    if missing:
        items = "".join(f"<li><code>{esc(a)}</code>: {n} number(s) without a reproduced value"
                        + (f" &mdash; {esc(errors[a])}" if a in errors else "") + "</li>"
                        for a, n in missing.items())
        out.append(f"<h3>Not reproduced</h3><ul>{items}</ul>")
    recs = repro.to_dict("records")
    amc = [r for r in recs if str(r["artifact"]).startswith("amc_")]
    if amc and len(amc) < len(recs):
        out.append("<h3>VoxMem</h3>")
        out += _artifact_groups([r for r in recs if not str(r["artifact"]).startswith("amc_")])
        out.append('<h3>Audio MultiChallenge</h3><p class="lead">The AMC paper\'s Tables 2-5 (artifacts '
                   '<code>amc_*</code>), computed from the bundled SYNTHETIC Audio MultiChallenge release '
                   '<code>data/synthetic-amc</code> with the same tolerance rules.</p>')
        out += _artifact_groups(amc)
    else:
        out += _artifact_groups(recs)
    return "\n".join(out)


_REPRO_HEAD = ('<tr><th>row</th><th>column</th><th class="num">published</th><th class="num">reproduced</th>'
               '<th class="num">delta</th><th>kind</th><th>status</th></tr>')


def _repro_table(pairs) -> str:
    """The reproduction rows ``(status, row)`` as one table."""
    body = []
    for (_key, css, label), r in pairs:
        body.append(f'<tr class="{css if css != "ok" else ""}"><td>{esc(r["row"])}</td><td>{esc(r["column"])}</td>'
                    f'<td class="num">{num(r["published"])}</td><td class="num">{num(r["reproduced"])}</td>'
                    f'<td class="num">{signed(r["delta"])}</td><td>{esc(r["kind"])}</td>'
                    f'<td><span class="pill {css}">{label}</span>'
                    + (f' {esc(r["note"])}' if r.get("note") else "") + '</td></tr>')
    return f'<div class="wide"><table>{_REPRO_HEAD}{"".join(body)}</table></div>'


def _artifact_groups(recs: list[dict]) -> list[str]:
    """One collapsible table per artifact of ``recs`` (reproduction rows), worst first.  An artifact
    with rows outside tolerance, not reproduced or inconsistent in the paper is open: all its rows
    when there are at most :data:`OPEN_ROWS`, else those rows only, the others one click away."""
    out: list[str] = []
    groups: dict[str, list[dict]] = {}
    for r in recs:
        groups.setdefault(str(r["artifact"]), []).append(r)

    def badness(item):
        a, rows = item
        st = [_status(r)[0] for r in rows]
        return (-(st.count(0) + st.count(1)), list(groups).index(a))

    for art, rows in sorted(groups.items(), key=badness):
        pairs = sorted(zip([_status(r) for r in rows], rows), key=lambda t: t[0][0])
        n_fail = sum(s[0] == 0 for s, _ in pairs)
        n_miss = sum(s[0] == 1 and s[1] == "missing" for s, _ in pairs)
        n_inc = sum(s[1] == "warn" for s, _ in pairs)
        issues = n_fail + n_miss + n_inc
        cls = "has-fail" if n_fail else ("has-missing" if (n_miss or n_inc) else "")
        if issues and len(rows) > OPEN_ROWS:
            inner = (_repro_table(pairs[:issues]) + f'<details><summary>all {len(rows)} rows</summary>'
                     + _repro_table(pairs) + "</details>")
        else:
            inner = _repro_table(pairs)
        title = registry_title(art)
        out.append(f'<details class="{cls}"{" open" if issues else ""}><summary>{esc(art)}<span class="counts">'
                   + (f'{esc(title)} &middot; ' if title else "")
                   + f'{len(rows) - issues}/{len(rows)} within tolerance'
                   + (f", {n_fail} outside" if n_fail else "") + (f", {n_miss} not reproduced" if n_miss else "")
                   + (f", {n_inc} known paper inconsistency" if n_inc else "")
                   + f"</span></summary>{inner}</details>")
    return out


def _audit_rows(recs: list[dict], cols: list[str]) -> str:
    head = "".join(f'<th{" class=num" if c in ("lhs", "rhs", "delta", "tolerance") else ""}>{esc(c)}</th>' for c in cols)
    body = []
    for r in recs:
        ok = truthy(r.get("holds"))
        cells = []
        for c in cols:
            if c == "holds":
                cells.append(f'<td><span class="pill {"ok" if ok else "fail"}">{"holds" if ok else "fails"}</span></td>')
            elif c in ("lhs", "rhs", "delta", "tolerance"):
                cells.append(f'<td class="num">{num(r.get(c), 4)}</td>')
            elif c == "detail":
                cells.append(f'<td class="detail">{esc(r.get(c))}</td>')
            else:
                cells.append(f"<td>{esc(r.get(c))}</td>")
        body.append(f'<tr class="{"" if ok else "fail"}">{"".join(cells)}</tr>')
    return f'<div class="wide"><table><tr>{head}</tr>{"".join(body)}</table></div>'


def _audit_section(run: dict, audit) -> str:
    au = run.get("audit") or {}
    if audit is None:
        return f'<p class="lead">No audit.csv. {esc(au.get("error", ""))}</p>'
    recs = audit.to_dict("records")
    fails = [r for r in recs if not truthy(r.get("holds"))]
    out = [f'<p class="lead">Identities that must hold among the paper\'s own printed numbers (weighted means, sums, '
           f'differences, counts), each checked within rounding of the printed digits: {len(recs) - len(fails)} of '
           f'{len(recs)} hold, {len(fails)} fail. This checks the paper, not the data. Full table: '
           f'<a href="../audit.csv">audit.csv</a>.</p>']
    cols = [c for c in ("identity", "artifact", "description", "relation", "lhs", "rhs", "delta", "tolerance", "holds",
                        "detail") if c in audit.columns]
    by_art: dict[str, list[dict]] = {}
    for r in recs:
        by_art.setdefault(str(r.get("artifact")), []).append(r)
    rows = "".join(f'<tr class="{"fail" if any(not truthy(x.get("holds")) for x in rs) else ""}"><td>{esc(a)}</td>'
                   f'<td class="num">{len(rs)}</td><td class="num">{sum(truthy(x.get("holds")) for x in rs)}</td>'
                   f'<td class="num">{sum(not truthy(x.get("holds")) for x in rs)}</td></tr>'
                   for a, rs in sorted(by_art.items(),
                                       key=lambda kv: (all(truthy(x.get("holds")) for x in kv[1]), natural_key(kv[0]))))
    out.append('<table><tr><th>artifact</th><th class="num">identities</th><th class="num">hold</th>'
               f'<th class="num">fail</th></tr>{rows}</table>')
    if fails:
        out.append("<h3>Identities that fail</h3>" + _audit_rows(fails, cols))
    for art, rs in sorted(by_art.items(), key=lambda kv: natural_key(kv[0])):
        rs = sorted(rs, key=lambda r: truthy(r.get("holds")))
        n_fail = sum(not truthy(r.get("holds")) for r in rs)
        out.append(f'<details class="{"has-fail" if n_fail else ""}"><summary>{esc(art)}<span class="counts">'
                   f'{len(rs) - n_fail}/{len(rs)} hold</span></summary>{_audit_rows(rs, cols)}</details>')
    return "\n".join(out)


def _partial(stats: dict) -> str:
    """``; the unread part of 1 file whose lines could not be counted (a.jsonl.gz)`` or nothing."""
    files = stats.get("files_not_read_in_full") or []
    return (f"; the unread part of {len(files)} file{'' if len(files) == 1 else 's'} whose lines could not be "
            f"counted ({esc(', '.join(map(str, files)))})") if files else ""


def _validation_section(run: dict) -> str:
    rel = run.get("release") or {}
    probs = run.get("problems") or []
    stats = rel.get("stats") or {}
    out = []
    if rel.get("predictions") is not None:
        k = rel.get("models")
        out.append(f'<p class="lead">{rel.get("predictions")} predictions of {k} model{"" if k == 1 else "s"} read from '
                   f'{stats.get("files", "?")} files ({stats.get("lines", "?")} lines; '
                   f'{stats.get("rejected_lines", 0)} rejected; {stats.get("duplicates_identical", 0)} identical '
                   f'duplicates ignored{_partial(stats)}). The notebook <code>00_validate</code> prints the counts per model, budget '
                   f'and status.</p>')
    if not probs:
        out.append("<p>No validation problems.</p>")
        return "\n".join(out)
    rows = "".join(f'<tr class="{"fail" if p["severity"] == "error" else ""}"><td><span class="pill '
                   f'{"fail" if p["severity"] == "error" else "warn"}">{esc(p["severity"])}</span></td>'
                   f'<td><code>{esc(p["code"])}</code></td><td class="num">{p["count"]}</td><td>{esc(p.get("example"))}</td></tr>'
                   for p in sorted(probs, key=lambda p: (p["severity"] != "error", p["code"])))
    out.append('<div class="wide"><table><tr><th>severity</th><th>code</th><th class="num">count</th>'
               f'<th>example</th></tr>{rows}</table></div>')
    return "\n".join(out)


def _runs_section(run: dict) -> str:
    rel = run.get("release") or {}
    runs = rel.get("runs") or []
    names = rel.get("model_names") or list(dict.fromkeys(r["model"] for r in runs))
    if not runs:
        return '<p class="lead">No predictions were read.</p>'
    head = ('<tr><th>model</th><th>budget</th><th class="num">predictions</th><th class="num">scored</th>'
            '<th class="num">correct</th><th class="num">accuracy %</th><th class="num">answerable %</th>'
            '<th class="num">refusal (AR) %</th></tr>')
    body = "".join(f'<tr><td><b>{esc(r["model"])}</b></td><td>{esc(r["budget"])}</td><td class="num">{r["predictions"]}</td>'
                   f'<td class="num">{r["scored"]}</td><td class="num">{r["correct"]}</td>'
                   + "".join(f'<td class="num">{html_number(r.get(k), 1)}</td>'
                             for k in ("accuracy", "accuracy_answerable", "accuracy_refusal"))
                   + "</tr>" for r in runs)
    budgets = list(dict.fromkeys(r["budget"] for r in runs))
    return (f'<p class="lead"><b>{len(names)} model{"s" if len(names) != 1 else ""}</b>: '
            + ", ".join(f"<b>{esc(m)}</b>" for m in names)
            + f"; budgets run: {esc(', '.join(budgets))}. Accuracy is the paper's (Appendix C.4): correct / scored, "
              "failed and ungraded predictions count as incorrect, provider rejections leave the denominator.</p>"
            + f'<div class="wide"><table>{head}{body}</table></div>')


def _reference_section(out: Path) -> str:
    from voxmem_analysis.reproduce.published import published
    from voxmem_analysis.reproduce.reference import accuracy_reference, retention_reference

    fig4, fig6 = read_csv(out / "tables" / "fig4.csv"), read_csv(out / "tables" / "fig6.csv")
    intro = ('<p class="lead">For orientation only: the paper\'s published numbers where they are '
             'comparable with yours (same budget, same breakdown), in columns labelled <b>paper</b>. '
             'They come from other models and, on the paper\'s side, other item sets; no pass/fail is implied. '
             'The paper\'s own numbers: <code>data/paper/published.csv</code>.</p>')
    if fig4 is None:
        return intro + '<p class="lead">Not available: no Figure 4 table (tables/fig4.csv) was written.</p>'
    pub = published()
    parts = [intro]
    for b, table in accuracy_reference(fig4, pub):
        has_paper = any(str(c).startswith("paper") for c in table.columns)
        note = "" if has_paper else f" &mdash; the paper publishes no accuracy by evidence type at {esc(b)}"
        parts.append(f"<h3>Figure 4 / Table 15 at {esc(b)}: accuracy (%) by evidence type{note}</h3>"
                     + table_html(table))
    ret = retention_reference(fig6, pub)
    if ret is None:
        parts.append('<h3>Scaling curve (Figure 6)</h3><p class="lead">No comparable published number: the paper '
                     'publishes retention at 64K (% of 8K); your runs do not include both 8K and 64K.</p>')
    else:
        parts.append("<h3>Figure 6: retention at 64K (% of 8K)</h3>" + table_html(ret))
    return "\n".join(parts)


def _skipped_section(run: dict) -> str:
    """The notebooks skipped (or that wrote nothing), then the sections skipped inside those that ran,
    each with the reason it printed."""
    nbs = run.get("notebooks", [])
    rows = [(nb["name"], nb.get("reason") or "") for nb in nbs if nb["status"] == "skipped"]
    inner = [(nb["name"], sec, why) for nb in nbs if nb["status"] != "skipped"
             for sec, why in nb.get("sections_skipped") or ()]
    if not rows and not inner:
        return '<p class="lead">Every section ran.</p>'
    out = []
    if rows:
        body = "".join(f"<tr><td><code>{esc(n)}</code></td><td>{esc(r)}</td></tr>" for n, r in rows)
        out.append('<p class="lead">Notebooks the data does not support (or that need an optional part), with the '
                   'reason. Each lists what to add to the release folder (data/README.md).</p>'
                   f'<table><tr><th>notebook</th><th>why it was skipped</th></tr>{body}</table>')
    if inner:
        body = "".join(f"<tr><td><code>{esc(n)}</code></td><td>{esc(sec)}</td><td>{esc(why)}</td></tr>"
                       for n, sec, why in inner)
        out.append('<p class="lead">Sections skipped inside notebooks that ran, as each notebook printed them.</p>'
                   f'<table><tr><th>notebook</th><th>section</th><th>why it was skipped</th></tr>{body}</table>')
    return "\n".join(out)


def _findings_section(out: Path, flags: dict | None = None) -> str:
    """Every finding the notebooks saved (``OUT/findings/NAME.json``, :func:`voxmem_analysis.output.save_finding`):
    the sentence computed from this release, then the paper's own finding, labelled as the paper's."""
    from voxmem_analysis.output import read_findings

    found = read_findings(out)
    if not any(found.values()):
        return '<p class="lead">No notebook stated a finding (none ran far enough, or none applies to this release).</p>'
    parts = ['<p class="lead">Each sentence below is computed from this release\'s tables by '
             '<code>voxmem_analysis.analysis.findings</code>; the paper\'s own finding follows it, labelled as '
             'the paper\'s. Where the two differ, the tables of this release are what the sentence describes.</p>']
    for name in sorted(found, key=natural_key):
        items = "".join(f'<div class="findings"><p><b>{esc(r.get("topic"))}.</b> {esc(r.get("release"))}</p>'
                        + (f'<p class="paper">{esc(r["paper"])}</p>' if r.get("paper") else "") + "</div>"
                        for r in found[name])
        warn = ""
        for f in (flags or {}).get(f"findings/{name}.json", ()):
            warn = (f'<div class="provenance-warning">&#9888; Not made like the rest of this run: '
                    f'{esc("; ".join(f.what))} (<a href="#provenance">provenance</a>)</div>')
        parts.append(f"<h3>{esc(name)}</h3>{warn}{items}")
    return "\n".join(parts)


# ----------------------------------------------------------------------------- entry points
def _section(anchor: str, heading: str, body: str) -> tuple[str, str, str]:
    return anchor, heading, body


def _paper_sections(run, out, repro, audit, view: dict) -> list[tuple[str, str, str]]:
    return [_section("run", "Run summary", _run_section(run)),
            _section("findings", "Findings", _findings_section(out, view["flags"])),
            _section("reproduction", "Published vs reproduced numbers", _reproduction_section(run, repro)),
            _section("audit", "Consistency audit of the paper's numbers", _audit_section(run, audit)),
            _section("validation", "Validation of the release", _validation_section(run)),
            _section("figures", "Figures", figures_section(run, out, view["embed"], view["caps"], view["flags"])),
            _section("tables", "Tables", tables_section(run, out, view["caps"], view["flags"])),
            _section("provenance", "Provenance", provenance_section(out, run, view["found"], view["unreadable"]))]


def _analysis_sections(run, out, view: dict) -> list[tuple[str, str, str]]:
    return [_section("runs", "Your runs", _runs_section(run)),
            _section("findings", "Findings", _findings_section(out, view["flags"])),
            _section("figures", "Figures", figures_section(run, out, view["embed"], view["caps"], view["flags"])),
            _section("tables", "Tables", tables_section(run, out, view["caps"], view["flags"])),
            _section("reference", "The paper's numbers, for reference", _reference_section(out)),
            _section("skipped", "Skipped sections", _skipped_section(run)),
            _section("validation", "Validation of the release", _validation_section(run)),
            _section("provenance", "Provenance", provenance_section(out, run, view["found"], view["unreadable"])),
            _section("run", "Run summary", _run_section(run))]


def report_mode_of(run: dict) -> str:
    """``analysis`` when run.json says so (a release that is not the paper's), else ``paper``."""
    return "analysis" if (run.get("release") or {}).get("mode") == "analysis" else "paper"


def read_run(out: Path) -> tuple[dict, str | None]:
    """``OUT/run.json`` (an empty run when there is none), and why it could not be read when it is
    there but unreadable (the report then says so, and ``reproduce --report-only`` on stderr)."""
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


def render_report(out_dir, *, embed: bool = False) -> str:
    """The report page of the output folder ``out_dir`` as HTML text (``embed``: figures inlined)."""
    from voxmem_analysis import __version__

    out = Path(out_dir)
    run, unreadable = read_run(out)
    repro, audit = (read_csv(out / f) for f in ("reproduction.csv", "audit.csv"))
    repro = None if repro is None else repro.astype(object).where(repro.notna(), None)
    audit = None if audit is None else audit.astype(object).where(audit.notna(), None)
    rel = run.get("release") or {}
    synthetic, mode = bool(rel.get("synthetic")), report_mode_of(run)
    flags, found, bad_record = provenance_flags(out, run)
    view = {"embed": embed, "caps": captions(out), "flags": flags, "found": found, "unreadable": bad_record}
    data = esc(display_path(rel.get("path") or run.get("data_dir")))
    if mode == "analysis":
        names = ", ".join(rel.get("model_names") or []) or "?"
        title = f"VoxMem analysis report: {names}"
        lead = (f"Every table and figure the release <code>{data}</code> supports, for your runs first; sections it "
                f"cannot support are listed with the reason. The paper's numbers appear only as a labelled "
                f"reference (this release is not the paper's, so there is no reproduction scoreboard; "
                f"<code>--compare-published</code> adds one).")
        sections = _analysis_sections(run, out, view)
    elif rel.get("benchmark") == "audio-multichallenge":
        title = f"Audio MultiChallenge reproduction report: {rel.get('name') or '?'}"
        lead = (f"The Audio MultiChallenge notebook(s) executed on the AMC release <code>{data}</code> (the VoxMem "
                f"notebooks are skipped: not a VoxMem release), and each number the AMC paper prints in its "
                f"Tables 2-5 compared with the number computed here; the paper's known inconsistencies are marked "
                f"<code>paper_inconsistent</code> in the scoreboard (no audit.csv: the VoxMem paper audit does not apply).")
        sections = [s for s in _paper_sections(run, out, repro, audit, view) if s[0] != "audit"]
    else:
        title = "VoxMem reproduction report"
        lead = (f"Every notebook of the workbook executed on <code>{data}</code>, each published number of the paper "
                f"compared with the number computed here, and an audit of the paper's internal consistency.")
        sections = _paper_sections(run, out, repro, audit, view)
    title += " (SYNTHETIC DATA)" if synthetic else ""
    footer = (f"voxmem-analysis {esc(__version__)} &middot; <code>voxmem-analysis reproduce --data "
              f"{esc(display_path(run.get('data_dir')))} --out {esc(display_path(run.get('out_dir')))}"
              f" --seed {esc(run.get('seed'))} --n-boot {esc(run.get('n_boot'))}</code>"
              + (" &middot; SYNTHETIC DATA &mdash; not real model output" if synthetic else ""))
    nav = "".join(f'<a href="#{a}">{esc(h)}</a>' for a, h, _ in sections)
    body = "\n".join(f'<h2 id="{a}">{esc(h)}</h2>\n{b}' for a, h, b in sections)
    return Template(resource("report.html")).substitute(
        title=esc(title), css=resource("report.css"), banner=_banner(run),
        lead=lead + (f' <b>{esc(unreadable)}</b>' if unreadable else ""), nav=nav,
        cards=_cards(run, repro, audit, found), body=body, footer=footer)


def write_report(out_dir, *, embed: bool = False) -> Path:
    """Write ``out_dir/report/index.html`` from the files of ``out_dir``; return its path.

    ``embed=True`` inlines every figure (base64 PNG), so the one HTML file can be shared.
    """
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
