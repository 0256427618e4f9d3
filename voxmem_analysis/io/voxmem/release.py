"""A VoxMem release folder read into the tidy verdict frame, with the checks across its parts.  Strict mode
raises listing every error; lenient mode leaves out the broken lines."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from voxmem_analysis import __version__
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import Problem, VoxMemDataError
from voxmem_analysis.io.engine import cache as _cache
from voxmem_analysis.io.engine import files
from voxmem_analysis.io.engine.rules import collapse, fact
from voxmem_analysis.io.meta import read_meta
from voxmem_analysis.io.provenance import ReleaseProvenance
from voxmem_analysis.io.scoring import ScoringRules, apply_scoring
from voxmem_analysis.io.voxmem.predictions import BUDGET_DTYPE, read_prediction_files
from voxmem_analysis.io.voxmem.tables import add_source_operation, read_items, read_registry
from voxmem_analysis.textlimits import special_kind

if TYPE_CHECKING:  # pandas only on demand: Release.models, Release.pandas
    import pandas as pd

__all__ = ["Release", "load_release", "cache_key", "BUDGET_DTYPE"]

NO_RELEASE = "no_release"
NO_PREDICTIONS = fact("no_predictions", "error", lambda r: r["why"])
NOT_A_REGULAR_FILE = fact("not_a_regular_file", "error", lambda r: f"not read: not a regular file ({r['kind']}); "
                          "predictions must be a regular *.jsonl or *.jsonl.gz file")
FILE_NOT_READ = fact("file_not_read", "warning", lambda r: "not read: only *.jsonl and *.jsonl.gz files (any letter "
                     "case) are predictions" + r["link"])
MIXED_ABSTENTION = fact("mixed_abstention", "error", lambda r: f"model {r['model']!r} mixes allow_abstention=true and "
                        "false across its files", "allow_abstention")
MIXED_DELIVERY = fact("mixed_prompt_delivery", "warning", lambda r: "system prompts delivered both natively and folded "
                      "into the user turn across models; a cross-model table mixing both is not strictly comparable "
                      f"(folded: {r['folded']})", "system_prompt_delivery")
MIXED_JUDGES = fact("mixed_judges", "warning", lambda r: f"model {r['model']!r} at {r['budget']} was scored by more than "
                    "one judge", "judge")
AR_SOURCE = fact("ar_source_unknown", "warning", lambda r: "refusal items whose source operation is unknown (no item "
                 "table with paired_question_id); they are left out of by-source-operation tables only", "paired_question_id")
INCOMPLETE_RUN = fact("incomplete_run", "warning", lambda r: f"model {r['model']!r} has {r['n']} of the {r['n_items']} "
                      f"items seen at {r['budget']}", "item_id")
INCOMPLETE_64K = fact("incomplete_64k_run", "warning", lambda r: "no models.csv flags the 64K set, so it is inferred as "
                      "the models with a complete 64K run; left out (some 64K items missing or provider-rejected): "
                      + ", ".join(r["models"]), "in_64k_set")
MIXED_FOLDER = fact("mixed_models_in_folder", "error", lambda r: f"folder {r['folder']}/ holds {r['n']} model names: "
                    f"{r['names']}; a model folder holds one model (correct the `model` field or move the files)", "model")
SPELLING = fact("model_spelling", "error", lambda r: f"one model spelled {r['n']} ways: {r['names']}; names differing "
                "only in letter case, spaces, '-' or '_' are one model: use one spelling", "model")
REGISTRY_64K_MISSING = fact("registry_64k_missing", "error", lambda r: f"models.csv flags {r['model']!r} as in the 64K "
                            "set (in_64k_set=true) but the release has no 64K predictions for it: add them or set "
                            "in_64k_set=false", "in_64k_set")
REGISTRY_64K_SHORT = fact("registry_64k_incomplete", "warning", lambda r: f"models.csv flags {r['model']!r} as in the "
                          f"64K set but it has {r['n']} of the {r['n_items']} items seen at 64K", "in_64k_set")
REGISTRY_ABSENT = fact("registry_model_absent", "warning", lambda r: f"models.csv lists {len(r['models'])} model(s) with "
                       "no predictions in this release: " + ", ".join(r["models"]), "model")


def _listing(root: Path, sub: str) -> tuple[list[Path], list[Problem]]:
    """``(prediction files, problems of the walk and of the files not read)`` below ``root/sub``."""
    found = files.walk(root / sub, root)
    preds, other = found.split(lambda p: files.is_prediction_name(p.name) and p.is_file())
    return preds, found.problems + [_not_read(p, root) for p in other]


def _not_read(p: Path, root: Path) -> Problem:
    """Why a file of a predictions folder was not read: named like predictions but not a regular file
    (a FIFO, device or socket: never opened), an error; any other name, a warning."""
    try:
        mode = p.stat().st_mode
    except OSError:
        mode = None
    if files.is_prediction_name(p.name) and mode is not None and not (mode & 0o170000 == 0o100000):
        return NOT_A_REGULAR_FILE.problem(files.rel(p, root), kind=special_kind(mode))
    return FILE_NOT_READ.problem(files.rel(p, root), link=" (broken link)" if p.is_symlink() and not p.exists() else "")


@dataclass
class Release(ReleaseProvenance):
    """Everything read from one release directory."""

    path: Path
    frame: pl.DataFrame
    registry: pl.DataFrame
    items: pl.DataFrame | None = None
    judge2: pl.DataFrame | None = None
    ablation: pl.DataFrame | None = None
    meta: dict = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    rules: ScoringRules = field(default_factory=ScoringRules)

    @property
    def models(self) -> pd.DataFrame:
        """``models.csv`` as pandas (:attr:`registry` is the same table in polars)."""
        cached = self.__dict__.get("_models_pandas")
        if cached is None:
            cached = self.__dict__["_models_pandas"] = self.registry.to_pandas()
        return cached

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_models_pandas", "_derived")}

    def derived(self, key, compute):
        """``compute()``, kept while this release's ``frame`` and ``registry`` are the same objects (a
        cached value is shared: callers copy what they change)."""
        store = self.__dict__.setdefault("_derived", {})
        if store.get("_frame") is not self.frame or store.get("_registry") is not self.registry:
            store.clear()
            store["_frame"], store["_registry"] = self.frame, self.registry
        if key not in store:
            store[key] = compute()
        return store[key]

    @property
    def synthetic(self) -> bool:
        """True when the release or any of its lines is marked synthetic (not real model output)."""
        return bool(self.meta.get("synthetic")) or bool(self.frame.height and self.frame["synthetic"].any())

    def model_order(self) -> list[str]:
        """The models with predictions: ``models.csv`` order, then the others alphabetically."""
        return list(self.derived("model_order", self._model_order))

    def _model_order(self) -> tuple[str, ...]:
        present = set(self.frame["model"].unique().to_list())
        order = [m for m in self.registry["model"].to_list() if m in present]
        return tuple(order + sorted(present - set(order)))

    def models_in_64k_set(self) -> list[str]:
        """The models reported at 64K (Table 14): those flagged ``in_64k_set`` with 64K predictions, else those
        with a complete 64K run (every item, none rejected)."""
        return list(self.derived("models_in_64k_set", self._models_in_64k_set))

    def _models_in_64k_set(self) -> tuple[str, ...]:
        flagged = [m for m in self.registry.filter(pl.col("in_64k_set"))["model"].to_list() if m in set(self.model_order())]
        if flagged:
            at64 = set(self.frame.filter(pl.col("budget") == "64K")["model"].unique().to_list())
            return tuple(m for m in flagged if m in at64)
        complete = self._complete_at("64K")
        return tuple(m for m in self.model_order() if m in complete)

    def _complete_at(self, budget: str) -> set[str]:
        at = self.frame.filter(pl.col("budget") == budget)
        if not at.height:
            return set()
        n_items = at["item_id"].n_unique()
        per = at.group_by("model").agg(pl.col("item_id").n_unique().alias("n"),
                                       (pl.col("status") == "provider_rejected").sum().alias("rej"))
        return set(per.filter((pl.col("n") == n_items) & (pl.col("rej") == 0))["model"].to_list())

    def incomplete_64k_models(self) -> list[str]:
        """Models with 64K predictions left out of the inferred 64K set (see :meth:`models_in_64k_set`)."""
        if self.registry["in_64k_set"].any():
            return []
        at64 = set(self.frame.filter(pl.col("budget") == "64K")["model"].unique().to_list())
        return [m for m in self.model_order() if m in at64 - self._complete_at("64K")]

    def groups(self) -> dict[str, list[str]]:
        """Models by access group (``proprietary`` / ``open_weight``), in display order."""
        acc = dict(zip(self.registry["model"].to_list(), self.registry["access"].to_list()))
        out: dict[str, list[str]] = {}
        for m in self.model_order():
            out.setdefault(acc.get(m) or "unknown", []).append(m)
        return out

    def pandas(self, frame: pl.DataFrame | None = None) -> pd.DataFrame:
        """The verdict frame as pandas, ``budget`` as an ordered categorical."""
        import pandas as pd

        df = (self.frame if frame is None else frame).to_pandas()
        df["budget"] = pd.Categorical(df["budget"].astype(str), categories=list(tx.BUDGETS), ordered=True)
        return df


def load_release(path, *, strict: bool = True, rules: ScoringRules | None = None, cache: bool = False,
                 progress=None) -> Release:
    """Load a release directory.  ``strict``: raise listing every error, else leave out the lines that broke
    a rule; ``rules``: the scoring rules; ``cache``: reuse/keep a parsed copy; ``progress(done, total)``."""
    root = Path(path)
    rules = rules or ScoringRules()
    bad = files.user_path_problem(root, NO_RELEASE, "release directory", folder=True)
    if bad is not None:
        raise VoxMemDataError([bad])
    key = cache_key(root, rules) if cache else None
    release = _cache.read_release(key, root, rules, Release) if key is not None else None
    if release is None:
        release = _read_release(root, rules, progress)
        if key is not None:
            _cache.write_release(key, release)
    if strict and release.errors():
        raise VoxMemDataError(release.problems, f"{sum(p.count for p in release.errors())} error(s) in release "
                                                f"{str(root)!r}")
    return release


def cache_key(root: Path, rules: ScoringRules) -> str:
    """The parsed-release cache key of the release below ``root`` read under ``rules``: strict and lenient
    loads share it; the package version, the Release's fields and every scoring rule are part of it."""
    layout = tuple((f.name, str(f.type)) for f in fields(Release))
    return _cache.release_key(root, (__version__, layout, tuple((f.name, getattr(rules, f.name)) for f in fields(rules))))


def _part(root: Path, sub: str, items, rules: ScoringRules, stats: dict, progress) -> tuple[pl.DataFrame | None, list]:
    """An optional part (``judge2/``, ``ablation/``): its scored frame (None without prediction files)
    and its problems (for an empty part: why it gave no prediction file)."""
    paths, problems = _listing(root, sub)
    if not paths:
        return None, problems
    frame, more, s = read_prediction_files(root, sub, paths, items, sub == "ablation", progress)
    stats[f"{sub}_rows"] = s["rows"]
    return apply_scoring(frame, rules), problems + more


def _read_release(root: Path, rules: ScoringRules, progress=None) -> Release:
    meta, problems = read_meta(root)
    items, found, _ = read_items(root)
    problems += found
    items = add_source_operation(items)
    paths, found = _listing(root, "predictions")
    if not paths:
        problems.append(NO_PREDICTIONS.problem("predictions", why="no predictions/**/*.jsonl[.gz] files found"))
    frame, more, stats = read_prediction_files(root, "predictions", paths, items, False, progress)
    problems += found + more
    if stats["files"] and not stats["rows"] and not any(q.severity == "error" for q in more):
        problems.append(NO_PREDICTIONS.problem("predictions", why="the prediction files hold no predictions"))
    frame = apply_scoring(frame, rules)
    problems += _cross_checks(frame)
    models, found = read_registry(root, sorted(frame["model"].unique().to_list()) if frame.height else [])
    problems += found
    judge2, found = _part(root, "judge2", items, rules, stats, progress)
    problems += found
    ablation, found = _part(root, "ablation", items, rules, stats, progress)
    problems += found
    problems += _model_identity([f for f in (frame, judge2, ablation) if f is not None])
    problems += _registry_claims(frame, models)
    problems = collapse(problems)
    release = Release(root, frame, models, None, judge2, ablation, meta, problems, stats, rules)
    left_out = release.incomplete_64k_models() if frame.height else []
    if left_out:
        problems.append(INCOMPLETE_64K.problem("models.csv", None, len(left_out), models=left_out))
    release.items = items.drop("_items_file", "_source_operation", strict=False) if items is not None else None
    return release


def _cross_checks(frame: pl.DataFrame) -> list[Problem]:
    """Checks that need many lines at once."""
    if not frame.height:
        return []
    out = []
    mixed = (frame.group_by("model").agg(pl.col("allow_abstention").drop_nulls().n_unique().alias("n"),
                                          pl.col("source_file").first()).filter(pl.col("n") > 1))
    out += [MIXED_ABSTENTION.problem(r["source_file"], **r) for r in mixed.iter_rows(named=True)]
    deliveries = frame.group_by("model").agg(pl.col("system_prompt_delivery").drop_nulls().unique().alias("d"))
    if len({d for ds in deliveries["d"].to_list() for d in ds}) > 1:
        by = {r["model"]: "/".join(sorted(r["d"])) for r in deliveries.iter_rows(named=True)}
        out.append(MIXED_DELIVERY.problem(folded=", ".join(sorted(m for m, d in by.items() if "folded" in d))))
    judges = frame.group_by("model", "budget").agg(pl.col("judge").drop_nulls().n_unique().alias("n")).filter(pl.col("n") > 1)
    out += [MIXED_JUDGES.problem(**r) for r in judges.iter_rows(named=True)]
    ar_missing = frame.filter(pl.col("is_ar") & pl.col("source_operation").is_null()).height
    if ar_missing:
        out.append(AR_SOURCE.problem(None, None, ar_missing))
    cover = frame.group_by("model", "budget").agg(pl.len().alias("n"))
    full = frame.group_by("budget").agg(pl.col("item_id").n_unique().alias("n_items"))
    short = cover.join(full, on="budget").filter(pl.col("n") < pl.col("n_items"))
    out += [INCOMPLETE_RUN.problem(None, None, r["n_items"] - r["n"], **r) for r in short.sort("model", "budget").iter_rows(named=True)]
    return out


_SPELLING = re.compile(r"[\s_\-]+")


def _first_seen(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """``model, folder, source_file, source_line``: where each model first appears in each folder."""
    parts = [f.select("model", "source_file", "source_line") for f in frames if f.height]
    if not parts:
        return pl.DataFrame(schema={"model": pl.Utf8, "folder": pl.Utf8, "source_file": pl.Utf8, "source_line": pl.Int64})
    firsts = pl.concat([p.unique(subset=["model", "source_file"], keep="first", maintain_order=True) for p in parts])
    df = firsts.with_columns(pl.col("source_file").str.replace(r"/[^/]*$", "").alias("folder"))
    return (df.sort("source_file", "source_line").group_by("model", "folder", maintain_order=True)
            .agg(pl.col("source_file").first(), pl.col("source_line").first()))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


def _model_folder(folder: str, names: list[str]) -> bool:
    """A folder named after one of the models it holds (in any case and punctuation), below predictions/,
    judge2/ or a condition folder of ablation/ (other folders, ``predictions/8k/``, may hold several)."""
    if folder.count("/") < (2 if folder.startswith("ablation/") else 1):
        return False
    own = _slug(folder.rsplit("/", 1)[-1])
    return any(_slug(n) == own for n in names)


def _model_identity(frames: list[pl.DataFrame]) -> list[Problem]:
    """One model identity per folder, and one spelling per model: names differing only in letter case,
    spaces, ``-`` or ``_`` are one model spelled two ways (never merged silently)."""
    seen = _first_seen(frames)
    out: list[Problem] = []
    if not seen.height:
        return out
    for folder, grp in seen.group_by("folder", maintain_order=True):
        if grp.height > 1 and _model_folder(folder[0], grp["model"].to_list()):
            out.append(_names(MIXED_FOLDER, grp, folder=folder[0]))
    first = seen.group_by("model", maintain_order=True).agg(pl.col("source_file").first(), pl.col("source_line").first())
    first = first.with_columns(pl.col("model").map_elements(lambda m: _SPELLING.sub("-", m.strip().casefold()),
                                                            return_dtype=pl.Utf8).alias("_key"))
    out += [_names(SPELLING, grp) for _, grp in first.group_by("_key", maintain_order=True) if grp.height > 1]
    return out


def _names(rule, grp: pl.DataFrame, **row) -> Problem:
    """A problem about the model names of ``grp`` (first place of each), located at its second name."""
    names = "; ".join(f"{r['model']!r} (first at {r['source_file']}:{r['source_line']})" for r in grp.iter_rows(named=True))
    second = grp.row(1, named=True)
    return rule.problem(second["source_file"], second["source_line"], names=names, n=grp.height, **row)


def _registry_claims(frame: pl.DataFrame, models: pl.DataFrame) -> list[Problem]:
    """models.csv checked against the predictions: an ``in_64k_set`` model needs (all) 64K predictions; a
    listed model without predictions is named."""
    out: list[Problem] = []
    if not models.height:
        return out
    present = set(frame["model"].unique().to_list()) if frame.height else set()
    at64 = frame.filter(pl.col("budget") == "64K") if frame.height else frame
    n_items = at64["item_id"].n_unique() if at64.height else 0
    per = dict(at64.group_by("model").agg(pl.col("item_id").n_unique()).iter_rows()) if at64.height else {}
    for m in models.filter(pl.col("in_64k_set"))["model"].to_list():
        if m not in present:
            continue
        if not per.get(m):
            out.append(REGISTRY_64K_MISSING.problem("models.csv", model=m))
        elif per[m] < n_items:
            out.append(REGISTRY_64K_SHORT.problem("models.csv", None, n_items - per[m], model=m, n=per[m], n_items=n_items))
    absent = [m for m in models["model"].to_list() if m not in present]
    if absent and (frame.height or len(absent) < models.height):
        out.append(REGISTRY_ABSENT.problem("models.csv", None, len(absent), models=absent))
    return out
