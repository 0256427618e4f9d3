"""Read a release directory into the tidy verdict frame, losing nothing.

A *release directory* is the folder an evaluation run wrote (see ``data/README.md``):
``predictions/**/*.jsonl[.gz]`` in the public harness's format, plus optional
``items.*``, ``models.csv``, ``judge2/``, ``ablation/``, ``attribution/`` and
``release.json``.  Files are found and opened by :mod:`voxmem_analysis.io.files` (extensions
in any letter case, symbolic links followed with loop protection, unreadable folders and files
reported, bare-CR line endings, gzip streams cut short); after reading, one identity per model
(:func:`_model_identity`) and the registry's claims (:func:`_registry_claims`) are checked.

``load_release(path)`` validates everything it reads.  In strict mode (default) any
error raises :class:`~voxmem_analysis.errors.VoxMemDataError` listing *every* problem
with its file, line and field; in lenient mode (``strict=False``) the lines that
broke a rule are left out of the frame and the returned :class:`Release` carries the
list of problems, each counted, so nothing disappears silently.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import Problem, VoxMemDataError
from voxmem_analysis.io import cache as _cache
from voxmem_analysis.io import files as rf
from voxmem_analysis.io.items import add_source_operation, read_items
from voxmem_analysis.io.jsonl import decode
from voxmem_analysis.io.prediction_lines import parse_bool
from voxmem_analysis.io.predictions import BUDGET_DTYPE, read_prediction_files
from voxmem_analysis.io.provenance import ReleaseProvenance
from voxmem_analysis.io.registry import read_models, read_registry, registry_pandas
from voxmem_analysis.io.scoring import ScoringRules, apply_scoring
from voxmem_analysis.textlimits import read_regular

if TYPE_CHECKING:  # pandas only on demand: Release.models, Release.pandas
    import pandas as pd

__all__ = ["Release", "load_release", "read_predictions", "read_items", "read_models", "read_registry", "BUDGET_DTYPE"]


# ----------------------------------------------------------------------------- files
def _prediction_files(root: Path, sub: str) -> list[Path]:
    """``*.jsonl`` / ``*.jsonl.gz`` files (any case) below ``root/sub``, symlinks followed."""
    return _listing(root, sub)[0]


def _listing(root: Path, sub: str) -> tuple[list[Path], list[Path], list[Problem]]:
    """``(prediction files, other files, problems of the walk)`` below ``root/sub``."""
    found, _, problems = rf.walk(root / sub, root)
    preds, other = rf.prediction_files(found)
    return preds, other, problems


def _rel(path: Path, root: Path) -> str:
    return rf.rel(path, root)


def read_predictions(root: Path, sub: str = "predictions", *, items: pl.DataFrame | None = None,
                     condition_from_dir: bool = False) -> tuple[pl.DataFrame, list[Problem], dict]:
    """Parse every harness file below ``root/sub`` (see :mod:`voxmem_analysis.io.predictions`).

    Returns the rows that passed (as a polars frame, before scoring), the problems and counts
    (``files``, ``files_unreadable``, ``lines``, ``rows``, ``rejected_lines``, ``duplicates_identical``).
    """
    root = Path(root)
    files, unread, problems = _listing(root, sub)
    problems += [_not_read(p, root) for p in unread]
    frame, more, stats = read_prediction_files(root, sub, files, items, condition_from_dir)
    return frame, problems + more, stats


# ----------------------------------------------------------------------------- release
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
        """``models.csv`` as pandas (:attr:`registry` is the same table in polars; pandas is imported
        on first use only, so loading a release never needs it)."""
        cached = self.__dict__.get("_models_pandas")
        if cached is None:
            cached = self.__dict__["_models_pandas"] = registry_pandas(self.registry)
        return cached

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_models_pandas", "_derived")}

    def derived(self, key, compute):
        """``compute()``, kept for this release while its ``frame`` and ``registry`` are the same
        objects (the analyses ask for the model order, the budgets run and the scored predictions
        many times per table).  A cached value is shared: callers copy what they change."""
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
        """The models reported at 64K (paper Appendix C.6, Table 14).

        ``in_64k_set`` in ``models.csv`` when any model is flagged there (a flagged model without
        any 64K prediction is left out: ``load_release`` reports it as an error).  Otherwise the models
        with a *complete* 64K run: a prediction for every item seen at 64K and none of them
        rejected by the provider (a model whose 64K calls were mostly rejected for context
        length did not take 64K histories, and must not enter the set: the pairing rule of C.6
        would then cut its shorter budgets down to its few 64K items).
        """
        return list(self.derived("models_in_64k_set", self._models_in_64k_set))

    def _models_in_64k_set(self) -> tuple[str, ...]:
        flagged = [m for m in self.registry.filter(pl.col("in_64k_set"))["model"].to_list() if m in set(self.model_order())]
        if flagged:
            # a flagged model without a single 64K prediction is not in the set (load_release reports it)
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


def _cross_checks(frame: pl.DataFrame, problems: list[Problem]) -> None:
    """Checks that need many lines at once."""
    if not frame.height:
        return
    mixed = (frame.group_by("model").agg(pl.col("allow_abstention").drop_nulls().n_unique().alias("n"),
                                          pl.col("source_file").first())
             .filter(pl.col("n") > 1))
    for r in mixed.iter_rows(named=True):
        problems.append(Problem("mixed_abstention", "error",
                                f"model {r['model']!r} mixes allow_abstention=true and false across its files",
                                r["source_file"], None, "allow_abstention"))
    deliveries = frame.group_by("model").agg(pl.col("system_prompt_delivery").drop_nulls().unique().alias("d"))
    kinds = {d for ds in deliveries["d"].to_list() for d in ds}
    if len(kinds) > 1:
        by = {r["model"]: "/".join(sorted(r["d"])) for r in deliveries.iter_rows(named=True)}
        folded = sorted(m for m, d in by.items() if "folded" in d)
        problems.append(Problem("mixed_prompt_delivery", "warning",
                                "system prompts delivered both natively and folded into the user turn across models; "
                                f"a cross-model table mixing both is not strictly comparable (folded: {', '.join(folded)})",
                                None, None, "system_prompt_delivery"))
    judges = frame.group_by("model", "budget").agg(pl.col("judge").drop_nulls().n_unique().alias("n")).filter(pl.col("n") > 1)
    for r in judges.iter_rows(named=True):
        problems.append(Problem("mixed_judges", "warning", f"model {r['model']!r} at {r['budget']} was scored by more than one judge",
                                None, None, "judge"))
    ar_missing = frame.filter(pl.col("is_ar") & pl.col("source_operation").is_null())
    if ar_missing.height:
        problems.append(Problem("ar_source_unknown", "warning",
                                "refusal items whose source operation is unknown (no item table with paired_question_id); "
                                "they are left out of by-source-operation tables only",
                                None, None, "paired_question_id", ar_missing.height))
    cover = frame.group_by("model", "budget").agg(pl.len().alias("n"))
    full = frame.group_by("budget").agg(pl.col("item_id").n_unique().alias("n_items"))
    short = cover.join(full, on="budget").filter(pl.col("n") < pl.col("n_items"))
    for r in short.sort("model", "budget").iter_rows(named=True):
        problems.append(Problem("incomplete_run", "warning",
                                f"model {r['model']!r} has {r['n']} of the {r['n_items']} items seen at {r['budget']}",
                                None, None, "item_id", r["n_items"] - r["n"]))


def load_release(path, *, strict: bool = True, rules: ScoringRules | None = None, cache: bool = False,
                 bulk: bool = True) -> Release:
    """Load a release directory into a :class:`Release`.

    Parameters
    ----------
    path : str or Path
        The release directory (see ``data/README.md``).
    strict : bool
        Raise :class:`VoxMemDataError` listing every error (default).  With ``False``,
        lines that broke a rule are left out and reported in ``Release.problems``.
    rules : ScoringRules
        Scoring convention and provider-rejection rule (paper's by default).
    cache : bool
        Reuse / keep a parsed copy in the cache folder (:mod:`voxmem_analysis.io.cache`); off
        by default.  The command line passes ``True`` unless ``--no-cache`` is given.
    bulk : bool
        Ignored: kept so that calls written for the former two readers (columnar and line by line)
        still work; there is one reader now (:mod:`voxmem_analysis.io.predictions`).
    """
    root = Path(path)
    rules = rules or ScoringRules()
    if not root.is_dir():
        raise VoxMemDataError([Problem("no_release", "error", f"release directory {str(root)!r} does not exist")])
    key = cache_key(root, rules) if cache else None
    if key is not None:
        release = _cache.read_release(key, root, rules)
        if release is not None:
            if strict and release.errors():
                raise VoxMemDataError(release.problems, f"{_n_errors(release)} error(s) in release {str(root)!r}")
            return release
    release = _read_release(root, rules)
    if key is not None:
        _cache.write_release(key, release)
    if strict and release.errors():
        raise VoxMemDataError(release.problems, f"{_n_errors(release)} error(s) in release {str(root)!r}")
    return release


def cache_key(root: Path, rules: ScoringRules) -> str:
    """The parsed-release cache key of the release below *root* read under *rules*.

    Strict and lenient loads read the same Release (strictness only decides whether to raise after
    reading), so one entry serves both.  The Release's fields (names and types) and every scoring
    rule are part of the key: an entry written by code with another layout is never read.
    """
    from voxmem_analysis import __version__

    layout = tuple((f.name, str(f.type)) for f in fields(Release))
    return _cache.release_key(root, (__version__, layout, tuple((f.name, getattr(rules, f.name)) for f in fields(rules))))


def _empty_part(root: Path, sub: str) -> list[Problem]:
    """Why an optional part (``judge2/``, ``ablation/``) that exists gave no prediction file: folders
    that cannot be read (error), links not followed, files that are not ``*.jsonl[.gz]`` (warnings)."""
    _, unread, problems = _listing(root, sub)
    return problems + [_not_read(p, root) for p in unread]


def _not_read(p: Path, root: Path) -> Problem:
    """Why a file of a predictions folder was not read: a file named like predictions that is not
    a regular file (a FIFO, device or socket: never opened) is an error; any other name a warning."""
    import stat

    try:
        mode = p.stat().st_mode
    except OSError:
        mode = None
    if rf.is_prediction_name(p.name) and mode is not None and not stat.S_ISREG(mode):
        from voxmem_analysis.textlimits import special_kind

        return Problem("not_a_regular_file", "error", f"not read: not a regular file ({special_kind(mode)}); predictions "
                       "must be a regular *.jsonl or *.jsonl.gz file", _rel(p, root))
    return Problem("file_not_read", "warning", "not read: only *.jsonl and *.jsonl.gz files (any letter case) are "
                   "predictions" + (" (broken link)" if p.is_symlink() and not p.exists() else ""), _rel(p, root))


def _n_errors(release: Release) -> int:
    """Errors found (a summary line "... and 40 more like the above" counts as the 40 it stands for)."""
    return sum(p.count for p in release.errors())


def _read_release(root: Path, rules: ScoringRules) -> Release:
    problems: list[Problem] = []
    meta: dict = {}
    if (root / "release.json").exists():
        try:
            meta = json.loads(decode(read_regular(root / "release.json")))   # a FIFO: OSError, not a hang
        except json.JSONDecodeError as exc:
            problems.append(Problem("malformed_json", "error", f"release.json is not valid JSON: {exc.msg}", "release.json", exc.lineno))
        except (UnicodeDecodeError, RecursionError, ValueError) as exc:
            problems.append(Problem("malformed_json", "error", f"release.json cannot be read: {exc}", "release.json"))
        except OSError as exc:  # a folder, no permission
            problems.append(Problem("release_json_unreadable", "error",
                                    f"release.json cannot be read: {exc.strerror or exc}", "release.json"))
        if not isinstance(meta, dict):
            problems.append(Problem("invalid_field", "error", f"release.json must hold a JSON object, got {type(meta).__name__}",
                                    "release.json"))
            meta = {}
        syn, ok = parse_bool(meta.get("synthetic"))
        if not ok:
            problems.append(Problem("invalid_field", "error", f"synthetic must be true or false, got {meta.get('synthetic')!r}",
                                    "release.json", None, "synthetic"))
        meta["synthetic"] = bool(syn)
    items, p = read_items(root)
    problems += p
    items = add_source_operation(items)
    if not _prediction_files(root, "predictions"):
        problems.append(Problem("no_predictions", "error", "no predictions/**/*.jsonl[.gz] files found", "predictions"))
    frame, p, stats = read_predictions(root, "predictions", items=items)
    problems += p
    if stats["files"] and not stats["rows"] and not any(q.severity == "error" for q in p):
        problems.append(Problem("no_predictions", "error", "the prediction files hold no predictions", "predictions"))
    frame = apply_scoring(frame, rules)
    _cross_checks(frame, problems)
    models, p = read_registry(root, sorted(frame["model"].unique().to_list()) if frame.height else [])
    problems += p
    judge2 = ablation = None
    if _prediction_files(root, "judge2"):
        judge2, p, s = read_predictions(root, "judge2", items=items)
        problems += p
        judge2 = apply_scoring(judge2, rules)
        stats["judge2_rows"] = s["rows"]
    else:
        problems += _empty_part(root, "judge2")
    if _prediction_files(root, "ablation"):
        ablation, p, s = read_predictions(root, "ablation", items=items, condition_from_dir=True)
        problems += p
        ablation = apply_scoring(ablation, rules)
        stats["ablation_rows"] = s["rows"]
    else:
        problems += _empty_part(root, "ablation")
    _model_identity([f for f in (frame, judge2, ablation) if f is not None], problems)
    _registry_claims(frame, models, problems)
    problems = _collapse(problems)
    _pending = Release(root, frame, models, None, None, None, meta, [], stats, rules)
    left_out = _pending.incomplete_64k_models() if frame.height else []
    if left_out:
        problems.append(Problem("incomplete_64k_run", "warning",
                                "no models.csv flags the 64K set, so it is inferred as the models with a complete "
                                "64K run; left out (some 64K items missing or provider-rejected): " + ", ".join(left_out),
                                "models.csv", None, "in_64k_set", len(left_out)))
    return Release(root, frame, models, items.drop("_items_file", "_source_operation", strict=False) if items is not None else None,
                   judge2, ablation, meta, problems, stats, rules)


_SPELLING = re.compile(r"[\s_\-]+")


def _first_seen(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """``model, folder, source_file, source_line``: where each model first appears in each folder."""
    parts = [f.select("model", "source_file", "source_line") for f in frames if f.height]
    if not parts:
        return pl.DataFrame(schema={"model": pl.Utf8, "folder": pl.Utf8, "source_file": pl.Utf8, "source_line": pl.Int64})
    # a file's lines are in order: its first row of a model is that model's first line in the file
    firsts = pl.concat([p.unique(subset=["model", "source_file"], keep="first", maintain_order=True) for p in parts])
    df = firsts.with_columns(pl.col("source_file").str.replace(r"/[^/]*$", "").alias("folder"))
    return (df.sort("source_file", "source_line").group_by("model", "folder", maintain_order=True)
            .agg(pl.col("source_file").first(), pl.col("source_line").first()))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


def _model_folder(folder: str, names: list[str]) -> bool:
    """A folder named after one of the models it holds (``predictions/<model>/``, with the name in
    any case and punctuation: ``gemini-2-5-pro`` for ``Gemini-2.5-Pro``), below predictions/,
    judge2/ or a condition folder of ablation/.  Other folders (``predictions/8k/``) may hold
    several models."""
    depth = folder.count("/")
    if depth < (2 if folder.startswith("ablation/") else 1):
        return False
    own = _slug(folder.rsplit("/", 1)[-1])
    return any(_slug(n) == own for n in names)


def _model_identity(frames: list[pl.DataFrame], problems: list[Problem]) -> None:
    """One model identity per folder, and one spelling per model (errors naming files and lines).

    Two names that differ only in letter case, spaces, ``-`` or ``_`` (``GPT-4o`` / ``gpt 4o``)
    are one model spelled two ways: an error, never merged silently (the analyses would show two
    half models).  A folder named after a model (``predictions/<model>/``) that holds lines of
    another model name is an error too.
    """
    seen = _first_seen(frames)
    if not seen.height:
        return
    for folder, grp in seen.group_by("folder", maintain_order=True):
        if grp.height > 1 and _model_folder(folder[0], grp["model"].to_list()):
            problems.append(_names_problem(grp, "mixed_models_in_folder",
                                           f"folder {folder[0]}/ holds {grp.height} model names: {{names}}; a model "
                                           "folder holds one model (correct the `model` field or move the files)"))
    first = seen.group_by("model", maintain_order=True).agg(pl.col("source_file").first(), pl.col("source_line").first())
    first = first.with_columns(pl.col("model").map_elements(lambda m: _SPELLING.sub("-", m.strip().casefold()),
                                                            return_dtype=pl.Utf8).alias("_key"))
    for _, grp in first.group_by("_key", maintain_order=True):
        if grp.height > 1:
            problems.append(_names_problem(grp, "model_spelling",
                                           f"one model spelled {grp.height} ways: {{names}}; names differing only in "
                                           "letter case, spaces, '-' or '_' are one model: use one spelling"))


def _names_problem(grp: pl.DataFrame, code: str, template: str) -> Problem:
    """An error about the model names of *grp* (first place of each), located at its second name.

    *template* holds ``{names}``, which becomes ``'A' (first at file:line); 'B' (first at ...)``.
    """
    names = "; ".join(f"{r['model']!r} (first at {r['source_file']}:{r['source_line']})" for r in grp.iter_rows(named=True))
    second = grp.row(1, named=True)
    return Problem(code, "error", template.replace("{names}", names, 1), second["source_file"], second["source_line"], "model")


def _registry_claims(frame: pl.DataFrame, models: pl.DataFrame, problems: list[Problem]) -> None:
    """What models.csv says, checked against the predictions: a model flagged ``in_64k_set`` needs
    64K predictions (none: error; fewer than the items seen at 64K: warning), and a model listed
    there without any predictions is named (warning)."""
    if not models.height:
        return
    present = set(frame["model"].unique().to_list()) if frame.height else set()
    at64 = frame.filter(pl.col("budget") == "64K") if frame.height else frame
    n_items = at64["item_id"].n_unique() if at64.height else 0
    per = dict(at64.group_by("model").agg(pl.col("item_id").n_unique()).iter_rows()) if at64.height else {}
    for m in models.filter(pl.col("in_64k_set"))["model"].to_list():
        if m not in present:
            continue
        if not per.get(m):
            problems.append(Problem("registry_64k_missing", "error",
                                    f"models.csv flags {m!r} as in the 64K set (in_64k_set=true) but the release has no "
                                    "64K predictions for it: add them or set in_64k_set=false",
                                    "models.csv", None, "in_64k_set"))
        elif per[m] < n_items:
            problems.append(Problem("registry_64k_incomplete", "warning",
                                    f"models.csv flags {m!r} as in the 64K set but it has {per[m]} of the {n_items} items "
                                    "seen at 64K", "models.csv", None, "in_64k_set", n_items - per[m]))
    absent = [m for m in models["model"].to_list() if m not in present]
    if absent and (frame.height or len(absent) < models.height):
        problems.append(Problem("registry_model_absent", "warning",
                                f"models.csv lists {len(absent)} model(s) with no predictions in this release: "
                                + ", ".join(absent), "models.csv", None, "model", len(absent)))


def _collapse(problems: list[Problem], limit: int = 50) -> list[Problem]:
    """Keep problems as they are, but summarise codes repeated more than ``limit`` times per file."""
    by: dict[tuple, list[Problem]] = defaultdict(list)
    for p in problems:
        by[(p.code, p.severity, p.file)].append(p)
    out: list[Problem] = []
    for (code, sev, file), ps in by.items():
        if len(ps) <= limit:
            out.extend(ps)
        else:
            out.extend(ps[:limit])
            out.append(Problem(code, sev, f"... and {len(ps) - limit} more like the above", file, None, ps[0].field,
                               sum(p.count for p in ps[limit:])))
    return out
