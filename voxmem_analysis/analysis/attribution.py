"""Error attribution at 64K (App. D.5, E.1-E.5; §4.4 Finding 6): the population of wrong, committed answers
(refusals, empty generations and truncated answers removed first, in that order, and counted), each classed from
its audit record by the rule table of :mod:`.attribution_rules`; Table 20 and the class shares of Figures 7 and 10.
An incorrect prediction without an audit record is counted as ``missing_record``, never dropped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.attribution_rules import (AUDIT_FIELDS, COMMITS, COUNT_ANSWER_TYPES,
                                                        NON_SPECIFIC_COMMITS, REFUSAL_PATTERNS, RELATIONS, RULES,
                                                        SOURCES, VERDICT_ANSWER_TYPES, Rule, classify, is_refusal,
                                                        make_refusal_detector, rule_table)
from voxmem_analysis.artifacts import artifact
from voxmem_analysis.errors import AnalysisInputError, MissingDataError, Problem, VoxMemDataError
from voxmem_analysis.io.voxmem.attribution import check_records, drop_duplicate_records, read_audit_files

__all__ = [
    "AUDIT_FIELDS", "COMMITS", "SOURCES", "RELATIONS", "NON_SPECIFIC_COMMITS", "VERDICT_ANSWER_TYPES",
    "COUNT_ANSWER_TYPES", "REFUSAL_PATTERNS", "STAGES", "Rule", "RULES", "classify", "rule_table",
    "is_refusal", "make_refusal_detector", "load_audit_records", "audit_records_frame",
    "finish_audit", "select_models", "population_frame", "attribution_population", "attributed_errors",
    "population_table", "table20", "class_proportions", "class_proportions_by", "figure_table", "BUDGET", "MIN_ERRORS", "POPULATION_ROWS",
    "WRONG_TIME_RELATIONS", "ATTRIBUTION_ARTIFACTS",
]

BUDGET = "64K"
MIN_ERRORS = 5
#: Stages of the population, in the order they are applied (App. D.5).
STAGES: tuple[str, ...] = ("correct", "refusal", "empty", "truncated", "attributed", "missing_record")


def _to_pandas(frame) -> pd.DataFrame:
    df = frame.copy() if isinstance(frame, pd.DataFrame) else frame.to_pandas()
    if "budget" in df.columns:  # each distinct value normalised once (a frame has a handful)
        codes, uniques = pd.factorize(df["budget"].astype(object), use_na_sentinel=True)
        labels = np.array([tx.normalize_budget(v) for v in uniques] + [None], dtype=object)
        df["budget"] = pd.Series(labels[codes], index=df.index, dtype=object)
    return df


def select_models(frame, models=None) -> list[str]:
    """The systems of the attribution population: ``models`` (names), the flagged ``in_64k_set`` models of a
    registry frame (all at 64K when none is flagged), or ``None`` (every model at 64K, in order of appearance)."""
    df = _to_pandas(frame)
    at64 = list(dict.fromkeys(df.loc[df["budget"] == BUDGET, "model"].tolist()))
    if models is None:
        return at64
    if isinstance(models, pd.DataFrame):
        flag = models["in_64k_set"].map(lambda v: str(v).strip().lower() in ("true", "1", "yes"))
        flagged = [m for m in models.loc[flag, "model"] if m in set(at64)]
        return flagged or at64
    if isinstance(models, str):
        return [models]
    return list(models)


_POP_COLUMNS = ("model", "item_id", "evidence_type", "operation", "subtype", "answer_type", "status", "correct", "response")


def _population_attempts(frame, models) -> pd.DataFrame:
    df = _to_pandas(frame)
    missing = [c for c in ("model", "item_id", "budget", "evidence_type", "subtype", "correct", "status", "response")
               if c not in df.columns]
    if missing:
        raise AnalysisInputError(f"verdict frame lacks column(s) {missing}", missing[0])
    answerable = ~df["is_ar"].fillna(False).astype(bool) if "is_ar" in df.columns else df["operation"] != "answer_refusal"
    chosen = select_models(df, models)
    keep = (df["budget"] == BUDGET) & df["evidence_type"].isin(tx.AUDIO_NATIVE) & answerable & df["model"].isin(chosen)
    keep &= df["status"] != "provider_rejected"
    out = df.loc[keep].copy()
    if "operation" not in out.columns:
        out["operation"] = out["subtype"].map(tx.SUBTYPE_OPERATION)
    if "answer_type" not in out.columns:
        out["answer_type"] = None
    out["correct"] = out["correct"].map(lambda v: bool(v) if isinstance(v, (bool, np.bool_)) else False)
    return out[list(_POP_COLUMNS)].reset_index(drop=True)


def _blank(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip())


def population_frame(frame, audit: pd.DataFrame | None = None, *, models=None,
                     refusal_detector: Callable[[object], bool] = is_refusal) -> pd.DataFrame:
    """One row per attempt of the attribution population (``audit``: :func:`load_audit_records`' records; ``models``:
    :func:`select_models`) with the first of :data:`STAGES` it ends in: ``correct``; ``refusal`` (``refusal_detector``
    matches and no record says an answer was committed); ``empty`` (failed or blank); ``truncated``; ``attributed`` (a
    record exists); ``missing_record``. Columns ``model, item_id, evidence_type, operation, subtype, answer_type,
    status, correct, response``, the audit fields, ``has_record``, ``detector_overridden`` (a refusal hit a record
    overrules), ``stage``."""
    pop = _population_attempts(frame, models)
    if audit is None or len(audit) == 0:
        audit = pd.DataFrame(columns=["model", "item_id", *AUDIT_FIELDS])
    rec = audit[["model", "item_id", *AUDIT_FIELDS]].drop_duplicates(["model", "item_id"], keep=False)
    pop = pop.merge(rec, on=["model", "item_id"], how="left", indicator=True)
    pop["has_record"] = pop.pop("_merge") == "both"
    detector = pop["response"].map(lambda r: (not _blank(r)) and bool(refusal_detector(r)))
    # a hedged but committed answer ("I can't say for sure, but it was three") matches the detector, yet its
    # record says an answer was committed: it is attributed, not excluded
    committed = pop["has_record"] & pop["commits"].isin(["specific", "generic", "off_type", "truncated"])
    refusal = detector & ~committed
    pop["detector_overridden"] = detector & committed
    empty = (pop["status"] == "failed") | pop["response"].map(_blank)
    truncated = pop["has_record"] & (pop["commits"] == "truncated")
    pop["stage"] = np.select([pop["correct"], refusal, empty, truncated, pop["has_record"]],
                             ["correct", "refusal", "empty", "truncated", "attributed"], default="missing_record")
    return pop


def _stage_counts(pop: pd.DataFrame) -> dict[str, int]:
    s = pop["stage"]
    return {"attempts": len(pop), "incorrect": int((s != "correct").sum()), "refusals": int((s == "refusal").sum()),
            "empty": int((s == "empty").sum()), "truncated": int((s == "truncated").sum()),
            "attributed": int((s == "attributed").sum()), "missing_record": int((s == "missing_record").sum()),
            "unused_record": int((s.isin(["refusal", "empty"]) & pop["has_record"]).sum())}


_STAGE_DESCRIPTIONS = {
    "attempts": "64K, audio-native, answerable predictions of the selected systems (provider rejections excluded)",
    "incorrect": "attempts scored incorrect",
    "refusals": "incorrect: evidence- or capability-based refusal (removed first)",
    "empty": "incorrect: empty generation, status failed or blank response (removed second)",
    "truncated": "incorrect: answer stops mid-sentence, audit commits = truncated (removed third)",
    "attributed": "incorrect, not excluded, with an audit record: attributed",
    "missing_record": "incorrect, not excluded, without an audit record (not attributed; reported)",
    "unused_record": "audit records attached to refusals or empty generations (ignored; reported)",
}


def attribution_population(frame, audit: pd.DataFrame | None = None, *, models=None,
                           refusal_detector: Callable[[object], bool] = is_refusal,
                           by: str | None = None) -> pd.DataFrame:
    """Counts of the attribution population and its exclusions (App. D.5); with ``by`` (``"model"`` or
    ``"evidence_type"``) one block per value. Columns ``[by,] stage`` (``attempts, incorrect, refusals, empty,
    truncated, attributed, missing_record, unused_record``), ``count``, ``description``."""
    pop = population_frame(frame, audit, models=models, refusal_detector=refusal_detector)
    if by is None:
        return pd.DataFrame([(k, n, _STAGE_DESCRIPTIONS[k]) for k, n in _stage_counts(pop).items()],
                            columns=["stage", "count", "description"])
    if by not in ("model", "evidence_type"):
        raise AnalysisInputError(f"by must be None, 'model' or 'evidence_type', got {by!r}", "by")
    order = select_models(frame, models) if by == "model" else list(tx.AUDIO_NATIVE)
    rows = [(g, k, n, _STAGE_DESCRIPTIONS[k]) for g in order for k, n in _stage_counts(pop[pop[by] == g]).items()]
    return pd.DataFrame(rows, columns=[by, "stage", "count", "description"])


_ERROR_COLUMNS = ("model", "item_id", "evidence_type", "operation", "subtype", "answer_type", "class", "rule")


def attributed_errors(frame, audit: pd.DataFrame | None, *, models=None,
                      refusal_detector: Callable[[object], bool] = is_refusal) -> pd.DataFrame:
    """One row per attributed error, in population order. Columns ``model, item_id, evidence_type, operation, subtype,
    answer_type, class, rule`` (the rule that decided it) and the audit fields (``commits ... why``)."""
    return _classify_attributed(population_frame(frame, audit, models=models, refusal_detector=refusal_detector))


def _classify_attributed(pop: pd.DataFrame) -> pd.DataFrame:
    err = pop[pop["stage"] == "attributed"].reset_index(drop=True)
    results = [classify(r, subtype=r["subtype"], answer_type=r["answer_type"]) for r in err.to_dict("records")]
    err["class"] = [c for c, _ in results]
    err["rule"] = [n for _, n in results]
    return err[[*_ERROR_COLUMNS, *AUDIT_FIELDS]]


#: Audit relations that place an answer at another point of the same state trajectory (E.3).
WRONG_TIME_RELATIONS: tuple[str, ...] = ("earlier_state", "later_state")
#: Row labels of :func:`population_table` (the paper's, and ``Missing record``: 0 when every error is audited).
POPULATION_ROWS: tuple[str, ...] = (
    "Answerable audio-native items", "Systems", "Attempts", "Incorrect", "Refusals", "Empty", "Truncated",
    "Attributed", "Missing record", "Not attributable", "Operation", "Wrong time point",
)


def population_table(frame, audit: pd.DataFrame | None, *, models=None,
                     refusal_detector: Callable[[object], bool] = is_refusal) -> pd.DataFrame:
    """The attribution population and the counts the paper quotes about it (App. D.5, E.2, E.3, E.5): index
    :data:`POPULATION_ROWS`, columns ``n`` and ``pct`` (of the attributed errors, for ``Not attributable`` and
    ``Operation`` only; ``Wrong time point``: a ``relation`` in :data:`WRONG_TIME_RELATIONS`)."""
    pop = population_frame(frame, audit, models=models, refusal_detector=refusal_detector)
    err = _classify_attributed(pop)
    st = _stage_counts(pop)
    n_na, n_op = int((err["class"] == "not_attributable").sum()), int((err["class"] == "operation").sum())
    counts = dict(zip(POPULATION_ROWS, [
        int(pop["item_id"].nunique()), int(pop["model"].nunique()), st["attempts"], st["incorrect"], st["refusals"],
        st["empty"], st["truncated"], st["attributed"], st["missing_record"], n_na, n_op,
        int(err["relation"].isin(WRONG_TIME_RELATIONS).sum())]))
    shares = {k: round(100.0 * v / st["attributed"], 1) if st["attributed"] else np.nan
              for k, v in (("Not attributable", n_na), ("Operation", n_op))}
    out = pd.DataFrame({"n": [counts[r] for r in POPULATION_ROWS],
                        "pct": [shares.get(r, np.nan) for r in POPULATION_ROWS]},
                       index=pd.Index(list(POPULATION_ROWS), name="Population"))
    out["n"] = out["n"].astype("int64")
    out["pct"] = out["pct"].astype("float64")
    return out


def _cell_counts(errors: pd.DataFrame, by: str) -> pd.DataFrame:
    """Class counts per (group, model, evidence_type) cell: index (group, model, evidence_type)."""
    e = errors.assign(_group=errors[by])
    c = e.groupby(["_group", "model", "evidence_type"], observed=True)["class"].value_counts().unstack(fill_value=0)
    return c.reindex(columns=list(tx.ATTRIBUTION_CLASSES), fill_value=0)


def table20(errors: pd.DataFrame, *, min_errors: int = MIN_ERRORS) -> pd.DataFrame:
    """Table 20: attributed errors by subtype, by audio-native evidence type and in total; columns ``Op.``, the
    five classes, ``Total`` and ``Cells`` (subtype rows: model × evidence cells with ``min_errors`` errors or more)."""
    classes = list(tx.ATTRIBUTION_CLASSES)
    labels = [tx.ATTRIBUTION_LABELS[c] for c in classes]

    def row(sub: pd.DataFrame, op: str = "", cells=pd.NA) -> list:
        cnt = sub["class"].value_counts().reindex(classes, fill_value=0)
        return [op, *cnt.tolist(), int(cnt.sum()), cells]

    rows = {}
    for s in tx.SUBTYPES:
        sub = errors[errors["subtype"] == s]
        cells = int((sub.groupby(["model", "evidence_type"]).size() >= min_errors).sum())
        rows[tx.SUBTYPE_LABELS[s]] = row(sub, tx.OPERATION_LABELS[tx.SUBTYPE_OPERATION[s]], cells)
    rows.update({tx.EVIDENCE_LABELS[e]: row(errors[errors["evidence_type"] == e]) for e in tx.AUDIO_NATIVE})
    rows["Total"] = row(errors)
    out = pd.DataFrame.from_dict(rows, orient="index", columns=["Op.", *labels, "Total", "Cells"])
    out = out.rename_axis("Subtype").astype({c: "int64" for c in [*labels, "Total"]})
    out["Cells"] = pd.Series([None if v is pd.NA else int(v) for v in out["Cells"]], index=out.index, dtype=object)
    return out


_BY_GROUPS = {
    "operation": (tx.ANSWERABLE_OPERATIONS, tx.OPERATION_LABELS),
    "evidence_type": (tx.AUDIO_NATIVE, tx.EVIDENCE_LABELS),
    "subtype": (tx.SUBTYPES, tx.SUBTYPE_LABELS),
}


def class_proportions(errors: pd.DataFrame, by: str = "operation", *, min_errors: int = MIN_ERRORS,
                      average: str = "macro") -> pd.DataFrame:
    """Share (%) of each attribution class among the errors of each group ``by`` (``operation``,
    ``evidence_type`` or ``subtype``; Figures 7 and 10).

    ``average="macro"`` (the paper's): the mean over the group's model × evidence cells with ``min_errors`` errors or
    more of their class shares; ``"pooled"``: the shares of all the group's errors; ``"count"``: the counts. Columns
    ``by, group, label``, one column per class, ``n_cells, n_errors`` (of the cells averaged), ``n_errors_all,
    average``."""
    if by not in _BY_GROUPS:
        raise AnalysisInputError(f"by must be one of {', '.join(_BY_GROUPS)}, got {by!r}", "by")
    if average not in ("macro", "pooled", "count"):
        raise AnalysisInputError(f"average must be 'macro', 'pooled' or 'count', got {average!r}", "average")
    groups, labels = _BY_GROUPS[by]
    classes = list(tx.ATTRIBUTION_CLASSES)
    cells = _cell_counts(errors, by) if len(errors) else None
    rows = []
    for g in groups:
        if cells is not None and g in cells.index.get_level_values(0):
            c = cells.xs(g, level=0)
        else:
            c = pd.DataFrame(columns=classes, dtype="int64")
        tot = c.sum(axis=1)
        q = c[tot >= min_errors]
        if average == "macro":
            share = q.div(q.sum(axis=1), axis=0).mean(axis=0) * 100 if len(q) else pd.Series(np.nan, index=classes)
            n_err = int(q.to_numpy().sum())
        else:
            n_all = c.to_numpy().sum()
            share = c.sum(axis=0) if average == "count" else (
                c.sum(axis=0) / n_all * 100 if n_all else pd.Series(np.nan, index=classes))
            n_err = int(n_all)
        rows.append([by, g, labels[g], *[float(share[k]) for k in classes], int(len(q)), n_err,
                     int(c.to_numpy().sum()), average])
    return pd.DataFrame(rows, columns=["by", "group", "label", *classes, "n_cells", "n_errors", "n_errors_all", "average"])


def finish_audit(rows: list[dict], problems: list[Problem], frame, models, strict: bool) -> pd.DataFrame:
    """Checked records as the audit frame; duplicates and records outside the population reported and left out."""
    kept = drop_duplicate_records(rows, problems)
    if frame is not None:
        att = _population_attempts(frame, models)
        status = {(m, i): c for m, i, c in zip(att["model"], att["item_id"], att["correct"])}
        ok = []
        for r in kept:
            key = (r["model"], r["item_id"])
            if key not in status:
                problems.append(Problem("not_in_population", "error",
                                        f"({key[0]}, {key[1]}) is not a 64K audio-native answerable prediction of "
                                        "the selected systems; record not used", r["source_file"], r["source_line"], "item_id"))
            elif status[key]:
                problems.append(Problem("record_for_correct_prediction", "error",
                                        f"({key[0]}, {key[1]}) was scored correct; record not used",
                                        r["source_file"], r["source_line"], "item_id"))
            else:
                ok.append(r)
        kept = ok
    cols = ["model", "item_id", *AUDIT_FIELDS, "source_file", "source_line"]
    out = pd.DataFrame(kept, columns=cols)
    out["evidence_recovered"] = out["evidence_recovered"].astype(bool)
    out["source_session"] = out["source_session"].astype("Int64")
    out["source_line"] = out["source_line"].astype("Int64")
    if strict and any(p.severity == "error" for p in problems):
        raise VoxMemDataError(problems, f"{sum(p.severity == 'error' for p in problems)} error(s) in audit records")
    return out.sort_values(["model", "item_id"], kind="stable").reset_index(drop=True)


def audit_records_frame(records: Iterable[Mapping], *, frame=None, models=None, strict: bool = True,
                        file: str | None = None) -> tuple[pd.DataFrame, list[Problem]]:
    """:func:`load_audit_records` of in-memory records (``line``: the 1-based position)."""
    rows, problems = check_records(records, file)
    return finish_audit(rows, problems, frame, models, strict), problems


def load_audit_records(release_dir, *, frame=None, models=None, strict: bool = True) -> tuple[pd.DataFrame, list[Problem]]:
    """``(records, problems)`` of ``<release>/attribution/**/*.jsonl[.gz]``; given ``frame``, a record must belong to an
    incorrect prediction of the population.  ``strict``: :class:`VoxMemDataError` listing every problem (file, line,
    field); else the offending records left out. Returns (DataFrame, list of Problem): ``model, item_id, commits,
    answer, evidence_recovered, source, source_session, relation, why, source_file, source_line``."""
    rows, problems = read_audit_files(release_dir)
    return finish_audit(rows, problems, frame, models, strict), problems


#: The artifacts that read ``<release>/attribution/`` (named in the missing-folder error).
ATTRIBUTION_ARTIFACTS: tuple[str, ...] = ("table20", "fig7", "fig10", "population")


def _release_audit(release) -> tuple[list[str], pd.DataFrame]:
    """(selected systems, validated audit records) of a release; a clear error when it has no ``attribution/``."""
    path = getattr(release, "path", None)
    base = None if path is None else Path(path) / "attribution"
    if base is None or not base.is_dir():
        where = "the release" if path is None else f"release {Path(path)}"
        summary = (f"{where} has no attribution/ folder: the error-attribution artifacts "
                   f"({', '.join(ATTRIBUTION_ARTIFACTS)}) need its audit records")
        raise MissingDataError(summary, "folder missing; expected attribution/**/*.jsonl[.gz], one audit record per "
                               "line (FORMATS.md section 4)", code="no_attribution_folder", file="attribution/")
    models = release.models_in_64k_set()
    # read leniently (as the notebook does: one reading serves both), then fail as strict=True would
    audit, problems = load_audit_records(path, frame=release.frame, models=models, strict=False)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise VoxMemDataError(problems, f"{len(errors)} error(s) in audit records")
    return models, audit


def _release_errors(release) -> pd.DataFrame:
    models, audit = _release_audit(release)
    return attributed_errors(release.frame, audit, models=models)


def class_proportions_by(errors: pd.DataFrame, bys: Sequence[str], **kwargs) -> pd.DataFrame:
    """:func:`class_proportions` for several groupings stacked (Figure 7: ``("operation", "evidence_type")``)."""
    return pd.concat([class_proportions(errors, by=b, **kwargs) for b in bys], ignore_index=True)


def figure_table(errors: pd.DataFrame, bys: Sequence[str]) -> pd.DataFrame:
    """Figure 7 / 10 as a table: macro % per class (one decimal, as printed), ``Cells`` and ``Errors`` per group."""
    df = class_proportions_by(errors, bys)
    classes = list(tx.ATTRIBUTION_CLASSES)
    out = df[classes].round(1)
    out.columns = [tx.ATTRIBUTION_LABELS[c] for c in classes]
    out["Cells"] = df["n_cells"].to_numpy()
    out["Errors"] = df["n_errors"].to_numpy()
    out.index = pd.Index(df["label"].tolist(), name="Group")
    return out


@artifact("table20", title="Table 20: attributed errors at 64K by subtype and evidence type")
def _table20_artifact(release, *, seed: int = 0, n_boot: int = 10_000, **_) -> pd.DataFrame:
    return table20(_release_errors(release))


@artifact("fig7", title="Figure 7: error attribution by memory operation and evidence type (macro %, 64K)")
def _fig7_artifact(release, *, seed: int = 0, n_boot: int = 10_000, **_) -> pd.DataFrame:
    return figure_table(_release_errors(release), ("operation", "evidence_type"))


@artifact("fig10", title="Figure 10: error attribution by subtype (macro %, 64K)")
def _fig10_artifact(release, *, seed: int = 0, n_boot: int = 10_000, **_) -> pd.DataFrame:
    return figure_table(_release_errors(release), ("subtype",))


@artifact("population", title="App. D.5/E.2/E.3/E.5: attribution population, exclusions and quoted shares (64K)")
def _population_artifact(release, *, seed: int = 0, n_boot: int = 10_000, **_) -> pd.DataFrame:
    models, audit = _release_audit(release)
    return population_table(release.frame, audit, models=models)
