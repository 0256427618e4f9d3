"""The figures, tables and provenance sections of the report, and every output's caption.

Every figure and table is captioned "Figure N: ..." / "Table N: ..." as in the paper
(:func:`captions`; outputs the paper does not number get "Figure S1" ...); wide figures span the
page; tables of at most 20 rows are open; Table 15 is shown in the paper's order.  An output whose
provenance record differs from the run (:func:`voxmem_analysis.reproduce.provenance.findings`) carries
a warning saying how.
"""
from __future__ import annotations

import base64
import re
from pathlib import Path

import pandas as pd

from voxmem_analysis.reproduce.report_html import OPEN_ROWS, esc, natural_key, read_table, table_html

__all__ = ["captions", "paper_order_table15", "figures_section", "tables_section", "table_files", "figure_files",
           "registry_title",
           "provenance_flags", "provenance_section"]


def _owners(run: dict) -> dict[str, str]:
    own = {}
    for nb in run.get("earlier", []) + run.get("notebooks", []):
        for o in nb.get("outputs", []):
            own[o] = nb["name"]
    return own


def _by_notebook(files: list[Path], out: Path, own: dict[str, str]) -> dict[str, list[Path]]:
    groups: dict[str, list[Path]] = {}
    for f in files:
        groups.setdefault(own.get(f.relative_to(out).as_posix(), "other"), []).append(f)
    return dict(sorted(groups.items()))


# ----------------------------------------------------------------------------- captions
_NUMBERED = re.compile(r"^(?:AMC )?(Figure of Table|Figure|Table|Appendix|App\.)\s*[A-Z]?\.?\d")
_LABEL_TAIL = re.compile(r"\s*\[SYNTHETIC DATA[^\]]*\]\s*$")


def _md_caption(path: Path) -> str | None:
    """First line of a Markdown table written by ``output.save_table`` (its caption), label removed."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = fh.readline().strip()
    except OSError:
        return None
    if not first or first.startswith("|"):
        return None
    return _LABEL_TAIL.sub("", first).strip() or None


def registry_title(name: str) -> str | None:
    """The artifact registry's title of ``name``, read from the source (the report imports no
    analysis); from the imported registry only when the source cannot be read that way."""
    from voxmem_analysis import artifacts

    if "all" not in _TITLES:
        _TITLES["all"] = artifacts.source_titles()
    titles = _TITLES["all"]
    if titles is not None:
        return titles.get(name)
    try:
        return artifacts.get(name).title
    except Exception:  # noqa: BLE001 - an unknown name has no title
        return None


_TITLES: dict[str, dict | None] = {}


def _humanize(stem: str) -> str:
    if stem.startswith("lme_"):
        return "LongMemEval example (synthetic): " + stem[4:].replace("_", " ")
    return stem.replace("_", " ").strip().capitalize()


def captions(out: Path) -> dict[str, str]:
    """``{"figures/x.png" | "tables/x.csv": "Figure N: ..." | "Table N: ..."}`` for every output.

    A figure's caption is the one its notebook stored in the PNG (``save_figure(caption=...)``,
    written with the budgets the run used), else the table's own caption (``tables/NAME.md``),
    else the artifact registry's title (``fig4_model_evidence.png`` -> artifact ``fig4``; the
    paper's budgets); outputs the paper does not number get ``Figure S1``, ``Table S1`` ... in
    file order.
    """
    from voxmem_analysis.output import figure_caption

    caps: dict[str, str] = {}
    extra = {"figures": 0, "tables": 0}
    for kind, word in (("tables", "Table"), ("figures", "Figure")):
        for f in (table_files(out) if kind == "tables" else figure_files(out)):
            prefix = f.stem.split("_", 1)[0]
            own = _LABEL_TAIL.sub("", figure_caption(f) or "").strip() if kind == "figures" else ""
            text = (own or _md_caption(out / "tables" / f"{f.stem}.md") or _md_caption(out / "tables" / f"{prefix}.md")
                    or registry_title(f.stem) or registry_title(prefix))
            if text and kind == "figures" and text.startswith("Table "):
                num, _, rest = text.partition(":")
                text = f"Figure of {num}:{rest}"
            if not text or not _NUMBERED.match(text):
                extra[kind] += 1
                text = f"{word} S{extra[kind]}: {text or _humanize(f.stem)}"
            caps[f"{kind}/{f.name}"] = text
    return caps


# ----------------------------------------------------------------------------- figures and tables
def _png_size(f: Path) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, or None."""
    try:
        with f.open("rb") as fh:
            head = fh.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _img_src(f: Path, embed: bool) -> str:
    if embed:
        return "data:image/png;base64," + base64.b64encode(f.read_bytes()).decode("ascii")
    return f"../figures/{esc(f.name)}"


def table_files(out: Path) -> list[Path]:
    """The tables of ``OUT/tables`` (their CSV files; the long-form ``NAME.long.csv`` aside), in natural
    order (``table2`` before ``table13``)."""
    return sorted((f for f in (Path(out) / "tables").glob("*.csv") if not f.name.endswith(".long.csv")),
                  key=lambda f: natural_key(f.name))


def figure_files(out: Path) -> list[Path]:
    """The PNG figures of ``OUT/figures``, in natural order (``fig2a``, ``fig4``, ``fig10``)."""
    return sorted((Path(out) / "figures").glob("*.png"), key=lambda f: natural_key(f.name))


def _warning(flags: dict, files) -> str:
    """The provenance warning of an output made of ``files`` (relative to OUT), or ''."""
    found = [f for rel in files for f in flags.get(rel, ())]
    if not found:
        return ""
    what = sorted({w for f in found for w in f.what})
    return (f'<div class="provenance-warning">&#9888; Not made like the rest of this run: {esc("; ".join(what))} '
            f'(<a href="#provenance">provenance</a>)</div>')


def figures_section(run: dict, out: Path, embed: bool = False, caps: dict | None = None,
                    flags: dict | None = None) -> str:
    pngs = figure_files(out)
    if not pngs:
        return '<p class="lead">No figures were written.</p>'
    caps = caps if caps is not None else captions(out)
    parts = []
    for nb, files in _by_notebook(pngs, out, _owners(run)).items():
        figs = []
        for f in files:
            links = [f'<a href="../figures/{esc(f.name)}">PNG</a>']
            for ext in ("pdf", "csv"):
                if f.with_suffix(f".{ext}").exists():
                    links.append(f'<a href="../figures/{esc(f.stem)}.{ext}">{ext.upper()}</a>')
            src = _img_src(f, embed)
            cap = caps.get(f"figures/{f.name}", f.stem)
            size = _png_size(f)
            wide = ' class="span"' if size and size[0] > 1.6 * size[1] else ""
            warn = _warning(flags or {}, [f"figures/{f.stem}.{x}" for x in ("png", "pdf", "csv")])
            figs.append(f'<figure{wide}><a href="{src if not embed else "../figures/" + esc(f.name)}"><img src="{src}" '
                        f'alt="{esc(cap)}" loading="lazy"></a><figcaption><b>{esc(cap)}</b> '
                        f'<span class="file">{esc(f.stem)}</span> <span class="links">{"".join(links)}</span>'
                        f'{warn}</figcaption></figure>')
        parts.append(f"<h3>{esc(nb)}</h3><div class=\"figs\">{''.join(figs)}</div>")
    return "\n".join(parts)



def paper_order_table15(df):
    """Table 15 as the paper prints it: models by Overall accuracy, highest first, then the
    group means and the ``n`` row (counts as integers)."""
    if df is None or "Overall" not in df.columns or not len(df):
        return df
    key = df.columns[0]
    labels = df[key].astype(str)
    special = labels.str.startswith("Mean ") | (labels == "n")
    models = df[~special].sort_values("Overall", ascending=False, kind="stable")
    out = pd.concat([models, df[special & labels.str.startswith("Mean ")], df[labels == "n"]])
    n_row = out[key].astype(str) == "n"
    for c in out.columns[1:]:
        out[c] = out[c].astype(object)
        out.loc[n_row, c] = [None if pd.isna(v) else int(round(float(v))) for v in out.loc[n_row, c]]
    return out.reset_index(drop=True)


def _printed_decimals(names) -> dict[str, dict[str, int]]:
    """The paper's printed decimals per column of each table the paper publishes (``{}`` for the others)."""
    from voxmem_analysis.reproduce.published import published, printed_decimals

    pub = published(benchmark="all")
    known = set(pub["artifact"])
    return {n: printed_decimals(n, pub) for n in names if n in known}


def tables_section(run: dict, out: Path, caps: dict | None = None, flags: dict | None = None) -> str:
    csvs = table_files(out)
    if not csvs:
        return '<p class="lead">No tables were written.</p>'
    caps = caps if caps is not None else captions(out)
    printed = _printed_decimals([f.stem for f in csvs])
    parts = []
    for nb, files in _by_notebook(csvs, out, _owners(run)).items():
        parts.append(f"<h3>{esc(nb)}</h3>")
        for f in files:
            links = [f'<a href="../tables/{esc(f.name)}">CSV</a>']
            for ext, label in (("md", "Markdown"), ("tex", "LaTeX")):
                if f.with_suffix(f".{ext}").exists():
                    links.append(f'<a href="../tables/{esc(f.stem)}.{ext}">{label}</a>')
            df = read_table(f)
            note = ""
            if f.stem == "table15" and df is not None:
                df = paper_order_table15(df)
                note = ('<p class="lead">Rows as the paper prints them: models by Overall, highest first; '
                        'the CSV keeps the order of models.csv.</p>')
            warn = _warning(flags or {}, [f"tables/{f.stem}.{x}" for x in ("csv", "long.csv", "md", "tex")])
            shown = table_html(df, decimals=printed.get(f.stem)) if df is not None else "<p>(unreadable CSV)</p>"
            inner = warn + shown + note
            opened = " open" if df is not None and len(df) <= OPEN_ROWS else ""
            opened = " open" if warn else opened
            parts.append(f'<details{opened}><summary>{esc(caps.get(f"tables/{f.name}", f.stem))}<span class="counts">'
                         f'{esc(f.stem)} &middot; {"" if df is None else f"{len(df)} rows"} &middot; '
                         f'{" ".join(links)}</span></summary>{inner}</details>')
    return "\n".join(parts)


# ----------------------------------------------------------------------------- provenance
def provenance_flags(out: Path, run: dict):
    """``(findings by file, every finding, why provenance.json could not be read or None)``
    (:func:`voxmem_analysis.reproduce.provenance.findings`, read from the files of ``OUT``)."""
    from voxmem_analysis.reproduce.provenance import findings

    try:
        found = findings(out, run)
    except ValueError as exc:
        return {}, [], str(exc)
    by_file: dict[str, list] = {}
    for f in found:
        by_file.setdefault(f.file, []).append(f)
    return by_file, found, None


def _params_text(params: dict) -> str:
    from voxmem_analysis.reproduce.provenance import IGNORED_PARAMETERS

    return ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()) if k not in IGNORED_PARAMETERS) or "none"


def provenance_section(out: Path, run: dict, found: list, unreadable: str | None) -> str:
    """What made the outputs: per notebook its parameters, release (name, fingerprint) and package
    version, as recorded in ``OUT/provenance.json``; then every output made otherwise than the rest."""
    from voxmem_analysis.reproduce.provenance import grouped, notebook_source, read_records

    if unreadable:
        return f'<div class="error"><p>{esc(unreadable)}</p></div>'
    records = read_records(out)
    if not records:
        return '<p class="lead">No provenance.json: the outputs carry no record of what made them.</p>'
    names = sorted({r.get("notebook") for r in records.values() if r.get("notebook")})
    rows = []
    for n in names:
        src = notebook_source(records, n) or {}
        rel = src.get("release") or {}
        k = sum(r.get("notebook") == n for r in records.values())
        rows.append(f'<tr><td><code>{esc(n)}</code></td><td><code>{esc(_params_text(src.get("parameters") or {}))}'
                    f'</code></td><td>{esc(rel.get("name"))} <span class="file">{esc(rel.get("path"))}</span><br>'
                    f'<code class="fp">{esc(str(rel.get("fingerprint"))[:23])}&hellip;</code></td>'
                    f'<td>{esc(src.get("version"))}</td><td class="num">{k}</td></tr>')
    parts = ['<p class="lead">Each output records the notebook that made it, its parameters, the release it was '
             'made from (by a fingerprint of its files) and the package version: '
             '<a href="../provenance.json">provenance.json</a>.</p>',
             '<div class="wide"><table><tr><th>notebook</th><th>parameters</th><th>release</th><th>version</th>'
             f'<th class="num">files</th></tr>{"".join(rows)}</table></div>']
    if found:
        groups = grouped(found)
        items = "".join(f"<li><code>{esc(o)}</code>: {esc(what)}</li>" for o, what in groups)
        parts.insert(0, f'<div class="error"><h3>{len(groups)} output{"s" if len(groups) != 1 else ""} not made like the '
                        f'rest of this run</h3><p>Made later, with other parameters or from other data (for example '
                        f'a notebook run by hand into this folder). They are shown, marked, and not part of what '
                        f'run.json describes.</p><ul>{items}</ul></div>')
    else:
        parts.insert(0, '<p class="lead">Every output was made by this run, with the parameters and the release '
                        'shown below.</p>')
    return "\n".join(parts)
