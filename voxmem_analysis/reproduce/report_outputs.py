"""Every output's caption, and the figures, tables and provenance of a report as its templates show them.

Captions read "Figure N: ..." / "Table N: ..." as in the paper; outputs the paper does not number get
supplementary numbers (S1, S2 ...) from the fixed order of :data:`SUPPLEMENTARY`.  An output made otherwise than
its run (:func:`voxmem_analysis.reproduce.provenance.findings`) carries a warning saying how.
"""
from __future__ import annotations

import base64
import re
from pathlib import Path

import pandas as pd

from voxmem_analysis import artifacts
from voxmem_analysis.output import figure_caption
from voxmem_analysis.reproduce.provenance import findings, grouped, notebook_source, params_text, read_records
from voxmem_analysis.reproduce.published import printed_decimals, published
from voxmem_analysis.reproduce.report_html import (OPEN_ROWS, key_columns_first, natural_key, read_table, table_view)

__all__ = ["captions", "paper_order_table15", "figures_view", "tables_view", "table_files", "figure_files",
           "registry_title", "provenance_flags", "provenance_view", "SUPPLEMENTARY"]

#: The outputs the paper does not number, per kind in the order of their supplementary numbers: name pattern ->
#: caption when the output carries none.  An output not listed is numbered after these.
SUPPLEMENTARY = {
    "tables": dict.fromkeys(("validation_counts", "validation_design", "validation_problems", "composition", "groups",
                             "scaling_model", "judges_disagreements", "explorer_.+", "lme_slice", "lme_compare",
                             "lme_scaling", "lme_scaling_correlations", "lme_judges")),
    "figures": {"session_roles": "Sessions per history by role (evidence, same-key haystack, topical haystack, filler), "
                                 "mean count and share per budget",
                "scaling_model": None, "explorer_.+_by_budget": "{explorer} at every budget, one panel per budget",
                "explorer_.+": None,
                "lme_accuracy_by_type": "LongMemEval example (synthetic): accuracy (%) by system, budget and question "
                                        "type, Wilson 95% CI",
                "lme_comparison_matrix": "LongMemEval example (synthetic): pairwise differences between systems (pp) "
                                         "per budget",
                "lme_scaling": "LongMemEval example (synthetic): accuracy by budget per system"},
}


def _owners(run: dict) -> dict[str, str]:
    return {o: nb["name"] for nb in run.get("earlier", []) + run.get("notebooks", []) for o in nb.get("outputs", [])}


def _by_notebook(items: list[dict], own: dict[str, str]) -> list[dict]:
    groups: dict[str, list[dict]] = {}
    for it in items:
        groups.setdefault(own.get(it["rel"], "other"), []).append(it)
    return [{"name": k, "entries": v} for k, v in sorted(groups.items())]


# ----------------------------------------------------------------------------- captions
_NUMBERED = re.compile(r"^(?:AMC )?(Figure of Table|Figure|Table|Appendix|App\.)\s*[A-Z]?\.?\d")
_LABEL_TAIL = re.compile(r"\s*\[SYNTHETIC DATA[^\]]*\]\s*$")
_TITLES: dict[str, dict | None] = {}


def _md_caption(path: Path) -> str | None:
    """The caption of a Markdown table ``output.save_table`` wrote (its first line), the label removed."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = fh.readline().strip()
    except OSError:
        return None
    if not first or first.startswith("|"):
        return None
    return _LABEL_TAIL.sub("", first).strip() or None


def registry_title(name: str) -> str | None:
    """The registry's title of artifact ``name``, read from the source (the report imports no analysis)."""
    if "all" not in _TITLES:
        _TITLES["all"] = artifacts.source_titles()
    titles = _TITLES["all"]
    if titles is not None:
        return titles.get(name)
    try:
        return artifacts.get(name).title
    except Exception:  # noqa: BLE001 - an unknown name has no title
        return None


def _supplementary(kind: str, stem: str) -> tuple[int, str | None] | None:
    """(place in :data:`SUPPLEMENTARY` of ``kind``, its caption) of an output, or None."""
    return next(((i, words) for i, (pattern, words) in enumerate(SUPPLEMENTARY[kind].items(), start=1)
                 if re.fullmatch(pattern, stem)), None)


def _explorer_words(out: Path, stem: str) -> str:
    """"Accuracy by subtype × evidence type": the explorer's own caption of the slice drawn by budget."""
    by = re.sub(r"^explorer_|(_all)?_by_budget$", "", stem)
    for md in sorted((out / "tables").glob("explorer_*.md")):
        cap = _md_caption(md) if re.fullmatch(rf"explorer_{re.escape(by)}_(\d+k|all)", md.stem) else None
        if cap:
            return cap.split(" \u2014 ")[0]
    return "Accuracy by the subtype explorer's slices"


def _own_caption(out: Path, kind: str, f: Path) -> str | None:
    prefix = f.stem.split("_", 1)[0]
    own = _LABEL_TAIL.sub("", figure_caption(f) or "").strip() if kind == "figures" else ""
    text = (own or _md_caption(out / "tables" / f"{f.stem}.md") or _md_caption(out / "tables" / f"{prefix}.md")
            or registry_title(f.stem) or registry_title(prefix))
    if text and kind == "figures" and text.startswith("Table "):
        number, _, rest = text.partition(":")
        text = f"Figure of {number}:{rest}"
    return text


def captions(out: Path) -> dict[str, str]:
    """``{"figures/x.png" | "tables/x.csv": "Figure N: ..." | "Table N: ..."}`` for every output: the caption
    stored in the PNG, else the table's own (``tables/NAME.md``), else the registry's title (``fig4_x`` -> ``fig4``);
    unnumbered outputs get ``Figure S1``, ``Table S1`` ... by their place in :data:`SUPPLEMENTARY` (``S8a``, ``S8b``
    for two of one place)."""
    out = Path(out)
    caps: dict[str, str] = {}
    for kind, word in (("tables", "Table"), ("figures", "Figure")):
        files = table_files(out) if kind == "tables" else figure_files(out)
        extra, places = len(SUPPLEMENTARY[kind]), {}
        for f in files:
            text = _own_caption(out, kind, f)
            if text and _NUMBERED.match(text):
                caps[f"{kind}/{f.name}"] = text
                continue
            place = _supplementary(kind, f.stem)
            if place is None:
                extra += 1
                place = (extra, None)
            words = place[1] and place[1].format(explorer=_explorer_words(out, f.stem))
            places.setdefault(place[0], []).append((f, text or words or _humanize(f.stem)))
        for n, shared in places.items():
            for i, (f, text) in enumerate(shared):
                tag = f"{n}{chr(ord('a') + i)}" if len(shared) > 1 else f"{n}"
                caps[f"{kind}/{f.name}"] = f"{word} S{tag}: {text}"
    return caps


def _humanize(stem: str) -> str:
    return stem.replace("_", " ").strip().capitalize()


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


def table_files(out: Path) -> list[Path]:
    """The CSV tables of ``OUT/tables`` (``NAME.long.csv`` aside), in natural order (``table2`` before ``table13``)."""
    return sorted((f for f in (Path(out) / "tables").glob("*.csv") if not f.name.endswith(".long.csv")),
                  key=lambda f: natural_key(f.name))


def figure_files(out: Path) -> list[Path]:
    """The PNG figures of ``OUT/figures``, in natural order (``fig2a``, ``fig4``, ``fig10``)."""
    return sorted((Path(out) / "figures").glob("*.png"), key=lambda f: natural_key(f.name))


def _warning(flags: dict, files) -> list[str]:
    """The sentences of the provenance warning of the output made of ``files``."""
    return sorted({w for rel in files for f in flags.get(rel, ()) for w in f.what})


def figure_item(f: Path, caption: str, *, embed: bool = False, href: str = "../figures/", warn=()) -> dict:
    """One figure as a template shows it: image (inlined with ``embed``), caption, links to its files."""
    src = ("data:image/png;base64," + base64.b64encode(f.read_bytes()).decode("ascii")) if embed else href + f.name
    links = [("PNG", href + f.name)] + [(ext.upper(), f"{href}{f.stem}.{ext}") for ext in ("pdf", "csv")
                                        if f.with_suffix(f".{ext}").exists()]
    size = _png_size(f)
    return {"rel": f"figures/{f.name}", "src": src, "href": href + f.name, "caption": caption, "stem": f.stem,
            "links": links, "wide": bool(size and size[0] > 1.6 * size[1]), "warn": list(warn)}


def figures_view(run: dict, out: Path, embed: bool, caps: dict, flags: dict) -> list[dict]:
    """The figures of ``OUT/figures`` grouped by the notebook that wrote them."""
    items = [figure_item(f, caps.get(f"figures/{f.name}", f.stem), embed=embed,
                         warn=_warning(flags, [f"figures/{f.stem}.{x}" for x in ("png", "pdf", "csv")]))
             for f in figure_files(out)]
    return _by_notebook(items, _owners(run))


def paper_order_table15(df):
    """Table 15 as the paper prints it: models by Overall, highest first, then the group means and ``n``."""
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


def _table_item(f: Path, caps: dict, printed: dict, flags: dict) -> dict:
    links = [("CSV", f"../tables/{f.name}")] + [(label, f"../tables/{f.stem}.{ext}") for ext, label in
                                                (("md", "Markdown"), ("tex", "LaTeX")) if f.with_suffix(f".{ext}").exists()]
    df, note = read_table(f), None
    if f.stem == "table15" and df is not None:
        df = paper_order_table15(df)
        note = "Rows as the paper prints them: models by Overall, highest first; the CSV keeps the order of models.csv."
    warn = _warning(flags, [f"tables/{f.stem}.{x}" for x in ("csv", "long.csv", "md", "tex")])
    table = None if df is None else table_view(key_columns_first(df, f.stem), decimals=printed.get(f.stem))
    return {"rel": f"tables/{f.name}", "caption": caps.get(f"tables/{f.name}", f.stem), "stem": f.stem,
            "links": links, "table": table, "note": note, "warn": warn,
            "open": bool(warn) or (df is not None and len(df) <= OPEN_ROWS)}


def tables_view(run: dict, out: Path, caps: dict, flags: dict) -> list[dict]:
    """The tables of ``OUT/tables`` by the notebook that wrote them, at the paper's precision where it has one."""
    csvs = table_files(out)
    pub = published(benchmark="all") if csvs else None
    known = set(pub["artifact"]) if pub is not None else set()
    printed = {f.stem: printed_decimals(f.stem, pub) for f in csvs if f.stem in known}
    return _by_notebook([_table_item(f, caps, printed, flags) for f in csvs], _owners(run))


# ----------------------------------------------------------------------------- provenance
def provenance_flags(out: Path, run: dict):
    """``(provenance findings by file, every finding, why provenance.json could not be read or None)``."""
    try:
        found = findings(out, run)
    except ValueError as exc:
        return {}, [], str(exc)
    by_file: dict[str, list] = {}
    for f in found:
        by_file.setdefault(f.file, []).append(f)
    return by_file, found, None


def provenance_view(out: Path, found: list, unreadable: str | None) -> dict:
    """Per notebook its parameters, release and version (``OUT/provenance.json``); the outputs made otherwise."""
    records = {} if unreadable else read_records(out)
    rows = []
    for n in sorted({r.get("notebook") for r in records.values() if r.get("notebook")}):
        src = notebook_source(records, n) or {}
        rel = src.get("release") or {}
        rows.append({"notebook": n, "params": params_text(src.get("parameters") or {}), "release": rel.get("name"),
                     "path": rel.get("path"), "fingerprint": str(rel.get("fingerprint"))[:23],
                     "version": src.get("version"), "files": sum(r.get("notebook") == n for r in records.values())})
    return {"unreadable": unreadable, "rows": rows, "found": grouped(found) if found else []}
