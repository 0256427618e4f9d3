"""Benchmark design: history scale (Figure 2(a), App. B.6), the nested-history checks, the question composition
(§3) and the model registry (Tables 12 and 14), from the item table or, without one, the prediction lines.

An item is a question × budget with one history; its audio clips per prompt are the median over models of the
harness's ``n_audio_clips``.
"""
from __future__ import annotations

import json
from typing import Iterable

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.artifacts import artifact
from voxmem_analysis.errors import Problem, VoxMemDataError

__all__ = [
    "QUANTITIES", "QUANTITY_LABELS", "ROLE_QUANTITIES", "UNKNOWN_ROLE", "SAMEKEY_CAP", "NESTING_RULES",
    "history_items", "history_scale", "session_roles", "nesting_check",
    "question_table", "benchmark_composition", "REPO_COLUMNS", "model_registry", "status_64k",
    "table12", "table14", "fig2a", "composition",
]

#: Quantities of :func:`history_scale`, in display order, and the item-table column each comes from.
QUANTITIES: dict[str, str] = {
    "sessions": "session_count",
    "audio_clips": "n_audio_clips",
    "audio_minutes": "history_duration_seconds",
    "reference_tokens": "history_audio_tokens",
    "evidence_sessions": "evidence_session_count",
    "samekey_haystack_sessions": "samekey_haystack_session_count",
    "topical_haystack_sessions": "topical_haystack_session_count",
    "filler_sessions": "filler_session_count",
}
QUANTITY_LABELS: dict[str, str] = {
    "sessions": "Sessions", "audio_clips": "Audio clips", "audio_minutes": "Minutes of audio",
    "reference_tokens": "Reference tokens", "evidence_sessions": "Evidence sessions",
    "samekey_haystack_sessions": "Same-key haystack sessions", "topical_haystack_sessions": "Topical haystack sessions",
    "filler_sessions": "Filler sessions"}
#: The session-role quantities, bottom to top of a stacked bar.
ROLE_QUANTITIES: tuple[str, ...] = ("evidence_sessions", "samekey_haystack_sessions", "topical_haystack_sessions",
                                    "filler_sessions")
#: The sessions of a history that no role count of the release accounts for (:func:`session_roles`).
UNKNOWN_ROLE = "unknown_sessions"
UNKNOWN_ROLE_LABEL = "Sessions of unknown role"
#: App. B.6: question-specific same-key distractors per budget, at most.
SAMEKEY_CAP: dict[str, int] = {"8K": 1, "16K": 2, "32K": 4, "64K": 8}

#: Rules of :func:`nesting_check` (code -> meaning).
NESTING_RULES: dict[str, str] = {
    "sessions_decrease": "a longer history has fewer sessions than a shorter one",
    "role_decrease": "a longer history has fewer same-key haystack, topical haystack or filler sessions",
    "audio_decrease": "a longer history has fewer reference tokens or seconds of audio",
    "samekey_cap": "more same-key haystack sessions than the schedule allows (1/2/4/8 at 8K/16K/32K/64K)",
    "evidence_changed": "the evidence sessions (count or ids) differ across budgets",
    "question_changed": "the question, gold answer or labels differ across budgets",
}

_ITEM_ID = r"^(?P<q>.+)_(?P<b>\d+[kK])$"
_SCALE_COLUMNS = ["budget", "quantity", "label", "n_items", "mean", "median", "q1", "q3", "iqr", "min", "max"]
_NEST_COLUMNS = ["question_id", "rules", "n_rules", "detail"]
_QUESTION_FIELDS = ("question_text", "gold_json", "evidence_type", "memory_operation", "subtype", "expected_response")
#: Counts that never shrink from a shorter history to a longer one (:func:`nesting_check`), and the rule of each.
_GROWING = {"session_count": "sessions_decrease", "samekey_haystack_session_count": "role_decrease",
            "topical_haystack_session_count": "role_decrease", "filler_session_count": "role_decrease",
            "history_audio_tokens": "audio_decrease", "history_duration_seconds": "audio_decrease"}
_LINE_COUNTS = ("session_count", "evidence_session_count", "samekey_haystack_session_count")


def _items_with_keys(release) -> pl.DataFrame | None:
    """The item table with canonical ``budget`` and ``question_id`` (from ``item_id`` when absent)."""
    items = release.items
    if items is None:
        return None
    parsed = items.select(pl.col("item_id").cast(pl.Utf8).str.extract_groups(_ITEM_ID).alias("_m"))
    qid = parsed["_m"].struct.field("q")
    raw_b = parsed["_m"].struct.field("b")
    if "question_id" in items.columns:
        qid = items["question_id"].cast(pl.Utf8).fill_null(qid)
    if "context_length" in items.columns:
        raw_b = items["context_length"].cast(pl.Utf8).fill_null(raw_b)
    budget = [tx.normalize_budget(b) for b in raw_b.to_list()]
    bad = [(i, b) for i, b, nb in zip(items["item_id"].to_list(), raw_b.to_list(), budget) if nb is None]
    if bad:
        raise VoxMemDataError([Problem("unknown_label", "error",
                                       f"item {i!r}: cannot tell its budget from context_length/item_id ({b!r})",
                                       "items", None, "context_length") for i, b in bad[:20]])
    return items.with_columns(pl.Series("question_id", qid.to_list(), dtype=pl.Utf8),
                              pl.Series("budget", budget, dtype=pl.Utf8))


def _line_items(release) -> pd.DataFrame:
    """Without an item table: one row per item from the prediction lines (``item_id, question_id, budget`` and
    the session counts they carry)."""
    fr = release.frame
    return (fr.group_by("item_id")
            .agg(pl.col("question_id").first(), pl.col("budget").cast(pl.Utf8).first(),
                 *[pl.col(c).drop_nulls().first() for c in _LINE_COUNTS if c in fr.columns])
            .to_pandas())


def _clips_per_item(release) -> pd.DataFrame:
    fr = release.frame
    if not fr.height or "n_audio_clips" not in fr.columns:
        return pd.DataFrame(columns=["item_id", "audio_clips", "audio_clips_values"])
    g = (fr.filter(pl.col("n_audio_clips").is_not_null())
         .group_by("item_id")
         .agg(pl.col("n_audio_clips").median().alias("audio_clips"),
              pl.col("n_audio_clips").n_unique().alias("audio_clips_values")))
    return g.to_pandas()


def history_items(release) -> pd.DataFrame:
    """One row per item (budget order, then ``item_id``). Columns ``item_id, question_id, budget``, the quantities of
    :data:`QUANTITIES` (NaN where the release does not say), ``audio_clips_values`` (distinct ``n_audio_clips`` over the
    models: 1 when they agree, 0 for none)."""
    items = _items_with_keys(release)
    if items is not None:
        cols = {"item_id": items["item_id"].cast(pl.Utf8).to_list(), "question_id": items["question_id"].to_list(),
                "budget": items["budget"].to_list()}
        df = pd.DataFrame({**cols, **{q: items[src].cast(pl.Float64, strict=False).to_list() if src in items.columns
                                      else [np.nan] * items.height for q, src in QUANTITIES.items()}})
    else:
        g = _line_items(release)
        df = g[["item_id", "question_id", "budget"]].copy()
        for q, src in QUANTITIES.items():
            df[q] = pd.to_numeric(g[src], errors="coerce") if src in g.columns else np.nan
    df["audio_minutes"] = df["audio_minutes"] / 60.0
    clips = _clips_per_item(release)
    df = df.merge(clips, on="item_id", how="left", suffixes=("_items", ""))
    if "audio_clips_items" in df.columns:       # predictions first, item table where they say nothing
        df["audio_clips"] = df["audio_clips"].astype(float).fillna(df.pop("audio_clips_items"))
    df["audio_clips_values"] = df["audio_clips_values"].fillna(0).astype(int)
    df["budget"] = pd.Categorical(df["budget"], categories=list(tx.BUDGETS), ordered=True)
    df = df.sort_values(["budget", "item_id"], kind="stable").reset_index(drop=True)
    df["budget"] = df["budget"].astype(str)
    return df[["item_id", "question_id", "budget", *QUANTITIES, "audio_clips_values"]]


def history_scale(release, *, budgets: Iterable[str] | None = None) -> pd.DataFrame:
    """Figure 2(a): per budget × quantity the release gives (linear quartiles). Columns ``budget, quantity, label,
    n_items, mean, median, q1, q3, iqr, min, max``."""
    bs = tx.normalize_budgets(budgets)
    hi = history_items(release)
    rows = []
    for b in bs:
        sub = hi[hi["budget"] == b]
        for q in QUANTITIES:
            v = sub[q].dropna().to_numpy(float)
            if not v.size:
                continue
            q1, med, q3 = np.percentile(v, [25, 50, 75])
            rows.append((b, q, QUANTITY_LABELS[q], int(v.size), float(v.mean()), float(med), float(q1), float(q3),
                         float(q3 - q1), float(v.min()), float(v.max())))
    return pd.DataFrame(rows, columns=_SCALE_COLUMNS)


def session_roles(release, *, budgets: Iterable[str] | None = None, scale: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean sessions per history by role (§3.2) and budget; the sessions of roles the release does not report form
    :data:`UNKNOWN_ROLE`, last.  ``scale``: a :func:`history_scale` to reuse. Columns ``budget, role, label, n_items,
    mean_sessions, share`` (of all the sessions; without a session count, of the roles reported)."""
    sc = history_scale(release, budgets=budgets) if scale is None else scale
    sub = sc[sc["quantity"].isin(ROLE_QUANTITIES)].copy()
    sub["quantity"] = pd.Categorical(sub["quantity"], categories=list(ROLE_QUANTITIES), ordered=True)
    sub["budget"] = pd.Categorical(sub["budget"], categories=list(tx.BUDGETS), ordered=True)
    sub = sub.sort_values(["budget", "quantity"])
    sessions = sc[sc["quantity"] == "sessions"].set_index("budget")
    parts = []
    for b, roles in sub.groupby("budget", observed=True, sort=True):
        rows = list(zip([str(b)] * len(roles), roles["quantity"].astype(str), roles["label"], roles["n_items"],
                        roles["mean"]))
        known = float(roles["mean"].sum())
        total = known
        if str(b) in sessions.index:
            all_sessions = float(sessions.loc[str(b), "mean"])
            if all_sessions - known > 1e-9 * max(all_sessions, 1.0):
                rows.append((str(b), UNKNOWN_ROLE, UNKNOWN_ROLE_LABEL, int(sessions.loc[str(b), "n_items"]),
                             all_sessions - known))
                total = all_sessions
        out = pd.DataFrame(rows, columns=["budget", "role", "label", "n_items", "mean_sessions"])
        out["share"] = out["mean_sessions"] / total
        parts.append(out)
    if not parts:
        return pd.DataFrame(columns=["budget", "role", "label", "n_items", "mean_sessions", "share"])
    return pd.concat(parts, ignore_index=True)


def _decreases(values: list, budgets: list[str]) -> list[str]:
    out, prev = [], None
    for v, b in zip(values, budgets):
        if v is None or (isinstance(v, float) and np.isnan(v)):
            continue
        if prev is not None and v < prev[0]:
            out.append(f"{_num(prev[0])} ({prev[1]}) > {_num(v)} ({b})")
        prev = (v, b)
    return out


def _num(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _canon_json(v):
    if v is None:
        return None
    try:
        return json.dumps(json.loads(v), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return str(v)


def nesting_check(release) -> pd.DataFrame:
    """The nested design of App. B.6, each rule of :data:`NESTING_RULES` where its columns exist: sessions, every
    non-evidence role and the audio never shrink from 8K to 64K, at most 1/2/4/8 same-key haystack sessions, the
    evidence and the question the same at every budget. One row per question breaking a rule: ``question_id, rules,
    n_rules, detail`` (empty when all hold)."""
    items = _items_with_keys(release)
    df = items.to_pandas() if items is not None else _line_items(release)
    if df.empty:
        return pd.DataFrame(columns=_NEST_COLUMNS)
    df["_b"] = df["budget"].map({b: i for i, b in enumerate(tx.BUDGETS)})
    df = df.sort_values(["question_id", "_b", "item_id"], kind="stable")
    for c in [*_GROWING, "evidence_session_count"]:
        if c in df.columns:
            df[c] = pd.to_numeric(df[c], errors="coerce")
    rows = []
    # each question's rows as plain lists (a DataFrame slice per question cost about 1 ms each)
    cols = {c: df[c].tolist() for c in df.columns}
    for qid, idx in df.groupby("question_id", sort=True).indices.items():
        g = {c: [v[i] for i in idx] for c, v in cols.items()}
        bs = g["budget"]
        found: dict[str, list[str]] = {}

        def add(rule, msg):
            found.setdefault(rule, []).append(msg)

        for c, rule in _GROWING.items():
            for d in _decreases(g[c], bs) if c in g else ():
                add(rule, f"{'sessions' if c == 'session_count' else c} {d}")
        if "samekey_haystack_session_count" in g:
            for v, b in zip(g["samekey_haystack_session_count"], bs):
                if pd.notna(v) and v > SAMEKEY_CAP[b]:
                    add("samekey_cap", f"{_num(v)} same-key haystack sessions at {b} (at most {SAMEKEY_CAP[b]})")
        if "evidence_session_count" in g:
            vals = {v for v in g["evidence_session_count"] if pd.notna(v)}
            if len(vals) > 1:
                add("evidence_changed", "evidence_session_count " + "/".join(
                    f"{_num(v)} ({b})" for v, b in zip(g["evidence_session_count"], bs) if pd.notna(v)))
        if "evidence_session_ids" in g:
            ids = {_canon_json(v) for v in g["evidence_session_ids"] if v not in (None, "") and not pd.isna(v)}
            if len(ids) > 1:
                add("evidence_changed", f"evidence_session_ids differ across {', '.join(bs)}")
        for f in _QUESTION_FIELDS:
            if f in g:
                norm = {"evidence_type": tx.normalize_evidence, "memory_operation": tx.normalize_operation,
                        "subtype": tx.normalize_subtype, "gold_json": _canon_json}.get(f, lambda x: x)
                vals = {norm(v) for v in g[f] if v not in (None, "") and not pd.isna(v)}
                if len(vals) > 1:
                    add("question_changed", f"{f} differs across budgets")
        if found:
            rules = [r for r in NESTING_RULES if r in found]
            rows.append((qid, ";".join(rules), len(rules), "; ".join(m for r in rules for m in found[r])))
    return pd.DataFrame(rows, columns=_NEST_COLUMNS)


def question_table(release) -> pd.DataFrame:
    """One row per question, labelled by its first item in budget order, from the item table (an AR question's source
    operation is its ``paired_question_id``'s operation, else the prediction lines'), else the predictions. Columns
    ``question_id, evidence_type, operation, subtype, is_ar, source_operation, answer_type, n_budgets``."""
    items = _items_with_keys(release)
    fr = release.frame
    if items is not None:
        df = items.to_pandas()
        df["_b"] = df["budget"].map({b: i for i, b in enumerate(tx.BUDGETS)})
        df = df.sort_values(["question_id", "_b"], kind="stable")
        get = lambda c: df[c] if c in df.columns else pd.Series([None] * len(df), index=df.index)  # noqa: E731
        q = pd.DataFrame({
            "question_id": df["question_id"],
            "evidence_type": get("evidence_type").map(lambda v: tx.normalize_evidence(v) if v is not None else None),
            "operation": get("memory_operation").map(lambda v: tx.normalize_operation(v) if v is not None else None),
            "subtype": get("subtype").map(lambda v: tx.normalize_subtype(v) if v not in (None, "") else None),
            "expected_response": get("expected_response"),
            "paired_question_id": get("paired_question_id").replace("", None),
            "answer_type": get("answer_type").replace("", None),
            "budget": df["budget"],
        })
        n_b = q.groupby("question_id")["budget"].nunique()
        q = q.groupby("question_id", sort=True).first().reset_index()
        q["n_budgets"] = q["question_id"].map(n_b).astype(int)
        q["is_ar"] = (q["expected_response"] == "insufficient_evidence") | (q["operation"] == "answer_refusal")
        own = dict(zip(q["question_id"], q["operation"]))
        q["source_operation"] = np.where(q["is_ar"], q["paired_question_id"].map(own), q["operation"])
        q["source_operation"] = q["source_operation"].where(pd.notna(q["source_operation"]), None)
        if fr.height:   # AR items whose pair is not in the table: the source operation the lines carry
            from_lines = (fr.filter(pl.col("is_ar") & pl.col("source_operation").is_not_null())
                          .group_by("question_id").agg(pl.col("source_operation").first()))
            fill = dict(zip(from_lines["question_id"].to_list(), from_lines["source_operation"].to_list()))
            miss = q["is_ar"] & q["source_operation"].isna()
            q.loc[miss, "source_operation"] = q.loc[miss, "question_id"].map(fill)
    else:
        g = (fr.sort("budget").group_by("question_id", maintain_order=True)
             .agg(pl.col("evidence_type").first(), pl.col("operation").first(), pl.col("subtype").first(),
                  pl.col("is_ar").first(), pl.col("source_operation").first(), pl.col("answer_type").drop_nulls().first(),
                  pl.col("budget").n_unique().alias("n_budgets"))
             .sort("question_id"))
        q = g.to_pandas()
        q["n_budgets"] = q["n_budgets"].astype(int)
    q["is_ar"] = q["is_ar"].astype(bool)
    return q[["question_id", "evidence_type", "operation", "subtype", "is_ar", "source_operation", "answer_type",
              "n_budgets"]].reset_index(drop=True)


def benchmark_composition(release) -> pd.DataFrame:
    """The design counts of §3 / Table 3: rows ``Operation|IE`` ..., ``AR source|...``, ``Subtype|...``
    (answerable), ``Answer type|...``, ``Routes|IE`` ... (subtype × evidence cells with an answerable question),
    ``Total|Answerable``, ``Total|AR``, ``Total|All`` and ``Total|Evaluated`` when fewer questions have a
    prediction (said in ``attrs["note"]``); columns the four evidence types and ``Total``."""
    q = question_table(release)
    evs = list(tx.EVIDENCE_TYPES)
    cols = [tx.EVIDENCE_LABELS[e] for e in evs]
    rows: dict[str, list[int]] = {}

    def count(mask) -> list[int]:
        sub = q[mask]
        c = [int((sub["evidence_type"] == e).sum()) for e in evs]
        return c + [int(len(sub))]

    for op in tx.OPERATIONS:
        rows[f"Operation|{tx.OPERATION_LABELS[op]}"] = count(q["operation"] == op)
    ar = q["is_ar"]
    for op in tx.ANSWERABLE_OPERATIONS:
        rows[f"AR source|{tx.OPERATION_LABELS[op]}"] = count(ar & (q["source_operation"] == op))
    unknown = ar & ~q["source_operation"].isin(tx.ANSWERABLE_OPERATIONS)
    if unknown.any():
        rows["AR source|unknown"] = count(unknown)
    for st in tx.SUBTYPES:
        op = tx.SUBTYPE_OPERATION[st]
        rows[f"Subtype|{tx.OPERATION_LABELS[op]}: {tx.SUBTYPE_LABELS[st]}"] = count(~ar & (q["subtype"] == st))
    for at in sorted(q["answer_type"].dropna().unique()):
        rows[f"Answer type|{at}"] = count(q["answer_type"] == at)
    if q["answer_type"].isna().any():
        rows["Answer type|unknown"] = count(q["answer_type"].isna())
    answerable = q[~ar]
    for op in tx.ANSWERABLE_OPERATIONS:
        sub = answerable[answerable["operation"] == op]
        per_ev = [int(sub.loc[sub["evidence_type"] == e, "subtype"].dropna().nunique()) for e in evs]
        rows[f"Routes|{tx.OPERATION_LABELS[op]}"] = per_ev + [sum(per_ev)]
    rows["Total|Answerable"] = count(~ar)
    rows["Total|AR"] = count(ar)
    rows["Total|All"] = count(pd.Series(True, index=q.index))
    evaluated = q["question_id"].isin(set(release.frame["question_id"].unique().to_list()))
    if not evaluated.all():   # the item table lists questions no prediction covers: say what Total counts
        rows["Total|Evaluated"] = count(evaluated)
    out = pd.DataFrame.from_dict(rows, orient="index", columns=cols + ["Total"]).astype(int)
    out.index.name = "Row"
    if not evaluated.all():
        out.attrs["note"] = (f"the counts are of the {len(q)} questions of the release's item table; "
                             f"{int(evaluated.sum())} of them have predictions (row Total|Evaluated), "
                             f"{int((~evaluated).sum())} have none")
    return out


#: ``models.csv`` columns accepted for Table 12's "Hugging Face Repo / API Model String" (first non-empty wins).
REPO_COLUMNS: tuple[str, ...] = ("hf_repo_or_api", "hugging_face_repo", "hf_repo", "repo", "api_model_string",
                                 "api_model", "model_string", "checkpoint")
_GROUPS = (("audio_specialist", "Audio-specialist models"), ("omni_modal", "Omni-modal models"),
           ("proprietary", "Proprietary APIs"))


def _group_of(access: str, architecture: str) -> str:
    if str(access).strip().lower() == "proprietary" or str(architecture).strip().lower() == "api":
        return "proprietary"
    arch = str(architecture).strip().lower()
    return arch if arch in ("audio_specialist", "omni_modal") else "other"


def model_registry(release) -> pd.DataFrame:
    """The Table 12 registry by group (Audio-specialist, Omni-modal, Proprietary, other), in the registry's order.
    Columns ``model, group, group_label, family, repo`` (the first of :data:`REPO_COLUMNS` given), ``llm_params_b,
    total_params_b, in_64k_set, n_items_64k`` (distinct items with a 64K prediction)."""
    reg = release.models.copy()
    in64 = set(release.models_in_64k_set())
    fr = release.frame
    n64 = dict(fr.filter(pl.col("budget") == "64K").group_by("model").agg(pl.col("item_id").n_unique())
               .iter_rows()) if fr.height else {}
    repo_cols = [c for c in REPO_COLUMNS if c in reg.columns]
    order = {g: i for i, (g, _) in enumerate(_GROUPS)}
    labels = dict(_GROUPS) | {"other": "Other models"}
    rows = []
    for i, r in enumerate(reg.to_dict("records")):
        g = _group_of(r.get("access", ""), r.get("architecture", ""))
        repo = next((str(r[c]).strip() for c in repo_cols if str(r[c]).strip()), None)
        rows.append(dict(model=r["model"], group=g, group_label=labels[g], family=r.get("family") or None, repo=repo,
                         llm_params_b=r.get("llm_params_b"), total_params_b=r.get("total_params_b"),
                         in_64k_set=r["model"] in in64, n_items_64k=int(n64.get(r["model"], 0)),
                         _g=order.get(g, len(order)), _i=i))
    df = pd.DataFrame(rows, columns=["model", "group", "group_label", "family", "repo", "llm_params_b",
                                     "total_params_b", "in_64k_set", "n_items_64k", "_g", "_i"])
    return df.sort_values(["_g", "_i"], kind="stable").drop(columns=["_g", "_i"]).reset_index(drop=True)


def _params(v) -> str:
    return "\u2014" if v is None or pd.isna(v) else f"{float(v):.1f}B"


def status_64k(release) -> pd.DataFrame:
    """Table 14, tidy: ``model, in_64k_set, n_items_64k``, the 64K set first, registry order within each."""
    df = model_registry(release)[["model", "in_64k_set", "n_items_64k"]]
    order = df.assign(_k=~df["in_64k_set"], _i=df["model"].map({m: i for i, m in enumerate(release.models["model"])}))
    return df.loc[order.sort_values(["_k", "_i"], kind="stable").index].reset_index(drop=True)


@artifact("table12", title="Table 12: evaluated systems (model registry), by group")
def table12(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Columns ``Group``, ``Family``, ``Hugging Face Repo / API Model String`` (when ``models.csv`` has one of
    :data:`REPO_COLUMNS`), ``LLM``, ``LLM+Enc.`` (parameters as printed, ``"7.6B"``, ``"—"`` when not given)."""
    reg = model_registry(release)
    out = pd.DataFrame({"Group": reg["group_label"].to_numpy(), "Family": reg["family"].fillna("").to_numpy()},
                       index=pd.Index(reg["model"], name="Model"))
    if any(c in release.models.columns for c in REPO_COLUMNS):
        out["Hugging Face Repo / API Model String"] = reg["repo"].fillna("\u2014").to_numpy()
    out["LLM"] = [_params(v) for v in reg["llm_params_b"]]
    out["LLM+Enc."] = [_params(v) for v in reg["total_params_b"]]
    return out


@artifact("table14", title="Table 14: the 64K model set (completed 64K run)")
def table14(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Columns ``64K Status`` (``✓`` in the 64K set, ``×`` otherwise) and ``64K items``."""
    st = status_64k(release)
    return pd.DataFrame({"64K Status": np.where(st["in_64k_set"], "\u2713", "\u00d7"),
                         "64K items": st["n_items_64k"].astype(int).to_numpy()}, index=pd.Index(st["model"], name="Model"))


@artifact("fig2a", title="Figure 2(a): history scale per budget (sessions, audio clips, minutes, roles)")
def fig2a(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None) -> pd.DataFrame:
    """Rows ``"<quantity>|<budget>"``; columns ``Items, Mean, Median, Q1, Q3, Min, Max``."""
    sc = history_scale(release, budgets=budgets)
    sc["_q"] = sc["quantity"].map({q: i for i, q in enumerate(QUANTITIES)})
    sc["_b"] = sc["budget"].map({b: i for i, b in enumerate(tx.BUDGETS)})
    sc = sc.sort_values(["_q", "_b"])
    return pd.DataFrame({"Items": sc["n_items"].astype(int).to_numpy(), "Mean": sc["mean"].to_numpy(),
                         "Median": sc["median"].to_numpy(), "Q1": sc["q1"].to_numpy(), "Q3": sc["q3"].to_numpy(),
                         "Min": sc["min"].to_numpy(), "Max": sc["max"].to_numpy()},
                        index=pd.Index([f"{lab}|{b}" for lab, b in zip(sc["label"], sc["budget"])], name="Quantity, budget"))


@artifact("composition", title="Benchmark composition (§3, Table 3): questions by evidence type, operation, subtype, answer type")
def composition(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """:func:`benchmark_composition`."""
    return benchmark_composition(release)
