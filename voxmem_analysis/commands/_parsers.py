"""Every command's options, declared once (:data:`COMMANDS`; :data:`OPTIONS` those several share), with the input
kinds each applies to (``V`` VoxMem release, ``A`` Audio MultiChallenge release, ``L`` LongMemEval verdicts, ``R``
judged Audio MultiChallenge runs): :func:`not_applying` names the options given that do not apply to the input a
command opened.  Light: building the parsers imports no pandas or polars."""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from dataclasses import dataclass, field

from voxmem_analysis.errors import InputError, ResourceLimitError

__all__ = ["Opt", "Command", "OPTIONS", "COMMANDS", "Parser", "build", "add_option", "not_applying", "KIND_LETTERS",
           "comma_list"]

KIND_LETTERS = {"V": "voxmem", "A": "amc_release", "L": "longmemeval", "R": "amc_runs"}
_KIND_WORDS = {"voxmem": "a VoxMem release", "amc_release": "an Audio MultiChallenge release",
               "longmemeval": "LongMemEval verdicts", "amc_runs": "judged Audio MultiChallenge runs"}


@dataclass(frozen=True)
class Opt:
    """One option: its flag, the input kinds it applies to (letters of :data:`KIND_LETTERS`), argparse's
    keywords, and the help group it is listed under."""

    flag: str
    kinds: str = "VALR"
    kw: dict = field(default_factory=dict)
    group: str | None = None

    def value(self, args):
        """Its value in ``args`` (None when the parser has no such option)."""
        return getattr(args, self.kw.get("dest") or self.flag.lstrip("-").replace("-", "_"), None)


def _opt(flag, kinds="VALR", group=None, **kw) -> Opt:
    return Opt(flag, kinds, kw, group)


def n_boot_arg(text: str) -> int:
    """argparse ``type=`` of ``--n-boot``: a whole number from 1 to the maximum (see stats.resources)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of resamples, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    # start-up: the package voxmem_analysis.stats imports pandas; argument parsing must not
    from voxmem_analysis.stats.resources import check_n_boot

    try:
        check_n_boot(value, option="--n-boot")
    except ResourceLimitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def comma_list(text: str | None) -> list[str]:
    """``"A, B,"`` -> ``["A", "B"]``; none given: ``[]``."""
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def regex_arg(text: str) -> str:
    """argparse ``type=`` of a regular-expression option: the text, if it compiles."""
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a valid regular expression ({exc}): {text!r}; "
                                         "escape special characters such as ( [ + with a backslash") from None
    return text


_FORMAT = "csv or md (Markdown); on a terminal the default is a readable table, elsewhere csv"
OPTIONS = {o.flag: o for o in (
    _opt("--data", metavar="DIR", help="release folder: VoxMem or Audio MultiChallenge (see data/README.md)"),
    _opt("--manifest", "LR", metavar="FILE",
         help="CSV listing result files (paths relative to it): with --questions, LongMemEval verdicts "
              "(path,system[,budget][,judge]); with --tasks, judged Audio MultiChallenge results "
              "(path,system[,output_modality][,judge])"),
    _opt("--questions", "L", metavar="FILE",
         help="with --manifest: the LongMemEval question file (question JSON, or CSV/JSONL/JSON with "
              "question_id,question_type)"),
    _opt("--tasks", "R", metavar="FILE",
         help="with --manifest: the Audio MultiChallenge task table (ScaleAI/audiomc test split as Parquet, JSON "
              "lines, JSON or CSV: id, axis, rubric)"),
    _opt("--type-key", "L", metavar="FIELD", default=None,
         help="field of the question file holding the question type (default: question_type, else type)"),
    _opt("--convention", "VL", choices=("paper", "harness"), default="paper",
         help="paper (default, App. C.4): failed and ungraded predictions count as incorrect; harness: the public "
              "scorer's rule, only predictions with a verdict count"),
    _opt("--rejection-pattern", "V", metavar="REGEX", default=None, type=regex_arg,
         help="regular expression on the error field that marks a provider rejection"),
    _opt("--lenient", action="store_true", help="leave out bad lines (reported) instead of failing"),
    _opt("--no-cache", "V", action="store_true",
         help="parse the release afresh instead of reusing the parsed-release cache (see voxmem-analysis cache "
              "--help)"),
    _opt("--judge", "LR", metavar="NAME", default=None,
         help="where a system (and budget) was graded by several judges, use this one (default: the first listed "
              "in the manifest; the choice is printed)"),
    _opt("--cluster", "VL", metavar="UNIT", default="item",
         help="bootstrap resampling unit: item (default) or family (VoxMem: a refusal question with its source; "
              "LongMemEval: X_abs with X); with --manifest also any column of the verdict frame; the output then "
              "states the design effect"),
    _opt("--format", choices=("csv", "md"), default=None, help=_FORMAT),
    _opt("--all-columns", action="store_true",
         help="on a terminal: every column (the default there shows the key columns)"),
    _opt("--seed", type=int, default=0, help="seed of bootstrap intervals (default 0)"),
    _opt("--n-boot", type=n_boot_arg, default=10_000, help="bootstrap resamples (default 10000)"),
    _opt("--where", "V", metavar="EXPR", default=None,
         help="boolean expression on the frame's columns (comparisons, AND/OR/NOT, IN, BETWEEN, LIKE, IS NULL), "
              "e.g. \"evidence_type = 'speech_semantics' AND session_count >= 20\" (see data/README.md)"),
    _opt("--out", metavar="FILE", default=None, help="write the table to FILE (csv or md by --format)"),
    _opt("--pred-error", "R", choices=("as-judged", "zero"), default="as-judged",
         help="a task with a pred_error (no response) keeps the judge's rubric results (as-judged, the default, as "
              "evaluation pipelines score it; it passes only when every item is met) or is scored as 0 items met "
              "(zero); a note says what each choice gives"),
)}
_DATA = ("--data", "--convention", "--rejection-pattern", "--lenient", "--no-cache")
_MANIFEST = ("--manifest", "--questions", "--tasks", "--type-key")
_TABLE_OUT = ("--format", "--all-columns")
_BOOT = ("--seed", "--n-boot")


@dataclass(frozen=True)
class Command:
    """A subcommand: help line, description, options (names of :data:`OPTIONS` or its own :class:`Opt`), and
    why options that do not apply do not (per kind or per option)."""

    help: str
    description: str
    options: tuple = ()
    why: dict = field(default_factory=dict)
    epilog: str | None = None


#: The options every artifact of ``table`` takes (its own parameters are added from its source).
TABLE_GENERAL = (*_DATA, Opt("--manifest", "R", {"metavar": "FILE", "default": None, "help": "with --tasks and "
                                                 "amc_table2: judged Audio MultiChallenge results (path,system"
                                                 "[,output_modality][,judge])"}),
                 "--tasks", "--judge",
                 Opt("--format", kw={"choices": ("long", "csv", "md", "tex"), "default": "long",
                                     "help": "long: CSV artifact,row,column,value (default)"}), *_BOOT)
_AMC_SLICE = "APR: Wilson interval; ARS: task bootstrap; --by any task column"
COMMANDS = {
    "slice": Command(
        "accuracy per slice (any columns), with the overall and macro-average rows",
        "Accuracy per slice of the verdicts (VoxMem, LongMemEval) with overall and macro rows, or APR (Wilson) and "
        "ARS (task bootstrap) of Audio MultiChallenge tasks, by any columns (--by).",
        (*_DATA, *_MANIFEST,
         _opt("--by", default=None, metavar="COL[,COL...]",
              help="columns to slice by (default: model,budget,evidence_type with --data, system,question_type with "
                   "--manifest --questions, system,axis for Audio MultiChallenge)"),
         _opt("--interval", "VL", choices=("auto", "wilson", "bootstrap"), default="auto",
              help="interval: Wilson score, or percentile bootstrap over questions; auto (default) uses the bootstrap "
                   "when a slice holds several rows of one question (several models or budgets pooled), since their "
                   "verdicts are not independent, and Wilson otherwise. In benchmarks/coverage_study.py (5-200 "
                   "questions, accuracy 0-100%%) Wilson's 95%% interval covers within 2 points of 95%% from 30 "
                   "questions with 4 right and 4 wrong (90.4-98.4%% below); rows below that are flagged in "
                   "accuracy_ci_flag"),
         _opt("--bootstrap-interval", "VL", choices=("percentile", "bca"), default="percentile",
              help="endpoints of the bootstrap rows: percentile (default) or bca (bias-corrected and accelerated). In "
                   "benchmarks/coverage_study.py (5-200 questions, one verdict each) the percentile interval covers "
                   "within 2 points of 95%% from 5 right and 5 wrong answers (90.8-100%% below), BCa only from 15 "
                   "(97.5-100%% where it is off: too wide); at 10 questions and 10%% accuracy both cover 99.8%%, "
                   "Wilson 93.0%%: for small or low-accuracy slices prefer --interval wilson, or percentile. Rows "
                   "below these counts are flagged in accuracy_ci_flag, a slice with no variation (none or all right) "
                   "gets the Wilson bound instead, and every bootstrap row states the Monte-Carlo standard error of "
                   "its endpoints and their resolution (accuracy_ci_low_mc_se, accuracy_ci_high_mc_se, "
                   "accuracy_ci_resolution)"),
         "--cluster",
         _opt("--type-col", "VL", default="auto", metavar="COL",
              help="column pooled into the overall row and averaged into the macro row (default: auto = last of "
                   "question_type/evidence_type/operation/subtype in --by; 'none' to disable)"),
         _opt("--model", "V", default=None, metavar="NAME[,NAME...]", group="with --data", help="only these models"),
         _opt("--budget", "V", default=None, metavar="B[,B...]", group="with --data",
              help="only these context lengths (8K, 16K, 32K, 64K)"),
         Opt("--where", "V", {**OPTIONS["--where"].kw}, "with --data"),
         _opt("--include-refusal", "V", action="store_true", group="with --data",
              help="with --by subtype: also count the answer-refusal items under their source subtype (default: "
                   "answerable items only, as the paper's subtypes)"),
         "--out",
         _opt("--plot", "VL", default=None, metavar="FILE",
              help="write the dot plot of the slices (PNG/PDF/SVG by suffix)"),
         _opt("--pool", "VL", action="store_true",
              help="with system (--manifest) or model (--data) in --by: also the overall row pooling several systems "
                   "(default: none; each system is its own analysis)"),
         "--pred-error", "--judge", *_TABLE_OUT, *_BOOT),
        {"amc_release": _AMC_SLICE, "amc_runs": _AMC_SLICE, "longmemeval": "they select a VoxMem release's verdicts",
         "--judge": "--judge selects among the judges of a --manifest; a VoxMem release (--data) has one verdict per "
                    "prediction (judge agreement: voxmem-analysis table table13 --data DIR)"}),
    "compare": Command(
        "paired comparison of systems at the same budget: bootstrap interval of the difference, exact "
        "McNemar, Holm (--data DIR or --manifest FILE)",
        "Every pair of systems on the items (tasks) both have: the difference (first minus second, pp; the header "
        "names both) with a paired bootstrap interval, exact McNemar p, Holm-adjusted p. VoxMem: at one budget; "
        "LongMemEval: at each budget; Audio MultiChallenge: APR and ARS, overall and per axis.",
        (*_DATA, *_MANIFEST,
         _opt("--models", "VAR", default=None, metavar="A,B[,C...]",
              help="the systems to compare, in this order (differences are the first minus the second); VoxMem: two "
                   "or more models (default: every model run at --budget); Audio MultiChallenge: default all"),
         _opt("--budget", "V", default=None, metavar="B",
              help="with --data: the context length (8K, 16K, 32K, 64K; default: the only budget the models share)"),
         _opt("--answerable-only", "V", action="store_true",
              help="with --data: leave out the answer-refusal (AR) items (default: all scored items)"),
         "--cluster",
         _opt("--interval", "VL", choices=("percentile", "bca"), default="percentile",
              help="bootstrap interval of the difference: percentile (default) or bca (bias-corrected and "
                   "accelerated). In benchmarks/coverage_study.py (5-30 pairs) the percentile interval covers within "
                   "2 points of 95%% with 5 discordant pairs each way or more (85.9-100%% below), BCa less well "
                   "(89.8%% at 10 pairs); rows below 5 (BCa: 15) are flagged in diff_ci_flag, and a pair without "
                   "discordant items gets the Wilson bound instead. diff_ci_low_mc_se, diff_ci_high_mc_se: the "
                   "Monte-Carlo standard error of each endpoint; diff_ci_resolution: the step of the values the "
                   "difference can take"),
         _opt("--p-adjust-family", choices=("all", "per-slice"), default="all",
              help="the rows Holm's adjustment covers (p_holm, named in holm_family): every row printed (default), or "
                   "the pairs of each budget (Audio MultiChallenge: of each axis)"),
         "--pred-error",
         "--judge", *_TABLE_OUT, *_BOOT),
        {"amc_release": "tasks are the unit", "amc_runs": "tasks are the unit",
         "longmemeval": "LongMemEval systems are compared at each budget of the manifest"}),
    "items": Command(
        "list items with the response and the verdict: one VoxMem model at one budget, or Audio "
        "MultiChallenge tasks with each system's response, rubric verdicts and the judge's explanations",
        "--data DIR: one row per item of one model at one budget (gold answer, response, verdict, status). "
        "--manifest FILE --tasks FILE: one row per task x system x rubric item (response, verdict, explanation).",
        (*_DATA, "--manifest", "--tasks",
         _opt("--model", "V", default=None, metavar="NAME",
              help="model name (the predictions' model field; default: the release's only model)"),
         _opt("--budget", "V", default=None, metavar="B",
              help="context length: 8K, 16K, 32K or 64K (default: the only budget the model was run at)"),
         _opt("--wrong", "V", action="store_true", help="only the incorrect scored items"),
         _opt("--system", "R", default=None, metavar="NAME[,NAME...]",
              help="with --tasks: only these systems (name, or 'name (Modality)')"),
         _opt("--axis", "R", default=None, metavar="AXIS[,AXIS...]",
              help="with --tasks: only these axes (IM, IR, SC, VE)"),
         _opt("--failed", "R", action="store_true", help="with --tasks: only the tasks a system failed"),
         "--judge",
         _opt("--by", "V", default=None, metavar="COL[,COL...]",
              help="group (sort) rows by these columns, e.g. subtype"),
         Opt("--where", "VR", {**OPTIONS["--where"].kw, "help": "boolean expression on the item frame's columns "
                                "(--data) or the task frame's (--tasks), e.g. \"subtype = 'counting' AND NOT is_ar\""}),
         *_TABLE_OUT, Opt("--out", kw={**OPTIONS["--out"].kw, "help": "write to FILE instead of standard output"})),
        {"amc_runs": "tasks are listed by --system, --axis, --failed"}),
    "export-frame": Command(
        "write the tidy verdict frame as Parquet or CSV",
        "One row per prediction (VoxMem), per model x modality x rubric item (Audio MultiChallenge release), or "
        "per task x system or rubric item of judged runs (--level; one judge per system, --judge).",
        (*_DATA, "--manifest", "--tasks",
         _opt("--level", "R", choices=("task", "rubric"), default="task",
              help="with --tasks: task (one row per task x system, default) or rubric (one row per task x system x "
                   "rubric item, with the response and the judge's explanation)"),
         "--judge",
         Opt("--out", kw={"required": True, "metavar": "FILE", "help": "output file ending in .parquet or .csv"})),
        {"--level": "it selects a level of judged Audio MultiChallenge runs"}),
    "judges": Command(
        "agreement and Cohen's kappa between judges (LongMemEval verdicts or judged Audio MultiChallenge runs)",
        "For every system (and budget) graded by two or more judges: each judge's accuracy, percent agreement and "
        "Cohen's kappa, per question type (LongMemEval) or rubric item by rubric item per axis (Audio "
        "MultiChallenge), and overall.",
        ("--manifest", "--questions", "--tasks", "--type-key", "--lenient", "--convention", "--format",
         "--all-columns")),
    "scaling": Command(
        "accuracy, change and retention across budgets (LongMemEval verdicts)",
        "Per system and question type: accuracy at each budget, change (pp) and retention against the baseline "
        "on the questions at both, with paired bootstrap intervals; then the Spearman correlations of Appendix D.5.",
        (Opt("--manifest", "L", {**OPTIONS["--manifest"].kw, "required": True}),
         Opt("--questions", "L", {**OPTIONS["--questions"].kw, "required": True}), "--type-key", "--lenient",
         "--convention",
         _opt("--baseline", default=None, metavar="BUDGET",
              help="the baseline budget, as written in the manifest (default: the shortest, when every budget is a "
                   "number of tokens such as 32k or 115000)"),
         _opt("--part", choices=("both", "table", "correlations"), default="both",
              help="print the scaling table, the correlations, or both (default)"),
         "--cluster", "--judge", *_TABLE_OUT, *_BOOT)),
    "power": Command(
        "minimum detectable difference / items needed for a paired comparison (normal approximation and "
        "exact McNemar test)",
        "How small a paired difference n items can detect, and the items a difference needs.\n\nEvery number names "
        "its method: *_normal from the normal approximation of McNemar's test (Connor 1987), *_exact from the exact "
        "conditional (binomial) McNemar test that compare runs.  The exact\ntest is conservative: at the normal "
        "approximation's minimum detectable difference its power is below\nthe requested one (e.g. 0.78 instead of "
        "0.80), and it needs a larger difference (mdd_exact_pp).\nWith --data, n and the discordance are the "
        "release's medians (--n / --discordance override them).",
        (Opt("--data", "V", OPTIONS["--data"].kw), "--convention", "--rejection-pattern", "--lenient", "--no-cache",
         _opt("--n", type=int, default=None, help="items compared (default: the release's median)"),
         _opt("--discordance", type=float, default=None,
              help="share of items on which the two sides disagree, e.g. 0.2 (default: the release's median)"),
         _opt("--target", type=float, default=None, metavar="PP",
              help="difference to detect, in percentage points: also print the items needed and the power at it, "
                   "by both methods"),
         _opt("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)"),
         _opt("--power", type=float, default=0.8, help="power (default 0.8)"),
         _opt("--compare", "V", choices=("models", "budgets"), default="models",
              help="with --data: discordance between models at --budget (default) or between budgets per model"),
         _opt("--budget", "V", default=None, help="with --data: the budget (default: 8K if run, else from the data)"),
         _opt("--comparison", "V", default=None,
              help="with --compare budgets: the second (default: 64K, else the longest)"),
         *_TABLE_OUT),
        epilog="columns: mdd_normal_pp  minimum detectable difference, normal approximation (Connor 1987), points\n"
               "         power_exact_at_mdd_normal  power of the exact McNemar test at that difference\n"
               "         mdd_exact_pp  minimum detectable difference of the exact McNemar test, points\n"
               "         with --target: target_pp, items_needed_normal, items_needed_exact,\n"
               "         power_at_target_normal, power_at_target_exact"),
    "validate": Command(
        "check a release folder (or Audio MultiChallenge runs) and count what it holds",
        "Count what a release (or judged Audio MultiChallenge runs) holds and list every problem (file:line "
        "[field]); exit 1 when there is an error.",
        (*_DATA, "--manifest", "--tasks")),
    "cache": Command(
        "show or clear the parsed-release cache, or set its size limit",
        "Show the parsed-release cache's folder, entries, size and size limit; clear it; set the limit.",
        (_opt("action", nargs="?", choices=("info", "clear"), default="info",
              help="info: folder, entries, size and limit (default); clear: delete every entry"),
         _opt("--clear", dest="action", action="store_const", const="clear", help="same as cache clear"),
         _opt("--limit", metavar="SIZE", default=None,
              help="keep the cache at most SIZE, e.g. 5GiB, 500MB, 2G (binary units), 0 (keep nothing) or default "
                   "(2 GiB); stored in the cache folder's settings.json")),
        epilog="The cache keeps each release a command parsed (frames as Arrow IPC, the rest as JSON; never\n"
               "pickle) and reuses it while no file of the release changed.  Folder: $VOXMEM_CACHE_DIR, else\n"
               "$XDG_CACHE_HOME/voxmem-analysis, else ~/.cache/voxmem-analysis, created private (mode 0700); a\n"
               "folder owned by another user or writable by group or others is not used.  Size limit: 2 GiB\n"
               "unless set with --limit (stored in settings.json in the folder); after each write the least\n"
               "recently used entries are removed until the cache fits, and a release larger than the limit is\n"
               "not kept (this command says which).  --no-cache on any command bypasses the cache."),
    "synth": Command(
        "write the calibrated SYNTHETIC release (not real model output)",
        "Write the calibrated SYNTHETIC release (not real model output), or check one.",
        (_opt("--out", metavar="DIR", default=None,
              help="release folder to write (omit with --check to check --data instead)"),
         _opt("--seed", type=int, default=None,
              help="generator seed (default: the committed release's, voxmem_analysis.synth.release.DEFAULT_SEED)"),
         _opt("--check", action="store_true",
              help="print the calibration report; exit 1 if a calibrated number is out of tolerance"),
         _opt("--data", metavar="DIR", default=None, help="with --check and no --out: release to check"),
         _opt("--n-boot", type=n_boot_arg, default=10_000, help="bootstrap resamples for the Table 18 intervals"),
         _opt("--benchmark", choices=("voxmem", "amc"), default="voxmem",
              help="amc: the SYNTHETIC Audio MultiChallenge release (voxmem_analysis.synth.amc)"))),
    "table": Command(
        "print one of the paper's tables/figure tables (see --list; NAME --help for its options)",
        "Print one of the paper's tables (table NAME --data DIR; NAME --help lists its parameters). amc_table2 "
        "--manifest FILE --tasks FILE lays out judged Audio MultiChallenge runs as the paper's Table 2.",
        (Opt("-h", kw={"flags": ("-h", "--help"), "action": "store_true",
                       "help": "show this help (NAME --help: the artifact's options)"}),
         _opt("name", nargs="?", help="artifact name, e.g. table15, fig5, table18"), *TABLE_GENERAL,
         _opt("--list", action="store_true", help="list the artifact names"),
         _opt("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS))),
}
COMMANDS["reproduce"] = Command(
    "execute every notebook and write figures, tables, reproduction.csv and a report",
    "Execute every notebook (papermill, in parallel), write OUT/figures, OUT/tables, OUT/notebooks, "
    "OUT/reproduction.csv, OUT/audit.csv and OUT/report/index.html. The output is built beside OUT and swapped in "
    "when complete (one run per folder; Ctrl-C leaves OUT as it was). Exit code 1 if a notebook or task failed.",
    (_opt("--data", metavar="DIR", help="release directory (see data/README.md)"),
     _opt("--manifest", metavar="FILE", default=None,
          help="with --tasks: judged Audio MultiChallenge results files (path,system[,output_modality][,judge]); "
               "writes an analysis report of these runs (no notebooks; the paper's Table 2 as reference)"),
     _opt("--tasks", metavar="FILE", default=None,
          help="with --manifest: the Audio MultiChallenge task table (ScaleAI/audiomc test split as Parquet, JSON "
               "lines, JSON or CSV)"),
     _opt("--judge", metavar="NAME", default=None,
          help="with --manifest: the judge to use where a system was graded by several (default: the first listed)"),
     _opt("--out", required=True, metavar="DIR", help="output folder (created)"),
     _opt("--jobs", "VA", type=int, default=None, metavar="N", help="notebooks run in parallel (default: cores)"),
     _opt("--n-boot", type=n_boot_arg, default=10_000, metavar="N", help="bootstrap resamples (default 10000)"),
     _opt("--seed", type=int, default=0, metavar="N", help="seed of every bootstrap (default 0)"),
     _opt("--only", "VA", metavar="NAME,...", help="run only these notebooks (e.g. 10_main_results,20)"),
     _opt("--notebooks", "VA", metavar="DIR", help="folder of notebooks (default: the repository's notebooks/)"),
     Opt("--parameter", "VA", {"flags": ("-p", "--parameter"), "dest": "parameter", "action": "append", "default": [],
                               "metavar": "NAME=VALUE",
                               "help": "set a parameter in the notebooks that declare it (VALUE is a Python literal "
                                       "or a string)"}),
     _opt("--timeout", type=float, default=900, metavar="SEC", help="per-cell time-out (default 900)"),
     _opt("--no-progress", action="store_true", help="no progress bar (one line per finished notebook)"),
     _opt("--quiet", action="store_true", help="no progress at all (the summary at the end only)"),
     _opt("--list", action="store_true", help="list the notebooks and their parameters, run nothing"),
     _opt("--report-only", action="store_true", help="rebuild OUT/report/index.html from OUT, run nothing"),
     _opt("--compare-published", "VA", action="store_true",
          help="also on a release that is not the paper's: the reproduction scoreboard (reproduction.csv) and the "
               "paper audit (default: only for the paper's calibrated release)"),
     _opt("--include-examples", "VA", action="store_true",
          help="also run the notebooks on bundled examples (the LongMemEval notebook 60)"),
     _opt("--keep-going", action=argparse.BooleanOptionalAction, default=True,
          help="a failing notebook stops nothing else and is reported in the new output (default); --no-keep-going: "
               "the first failure stops the run and the previous output stays as it was"),
     _opt("--embed", "VA", action="store_true",
          help="inline the figures into report/index.html (base64) so the one file can be shared")),
    {"amc_runs": "--manifest/--tasks write an analysis report of the runs; no notebooks run"})
COMMANDS["supplement"] = Command(
    "bundle LaTeX tables, PDF figures and every number into a folder and a zip",
    "Write OUT/voxmem_supplement/ (tableN.tex, figureN.pdf, voxmem_numbers.csv, README.md) and "
    "OUT/voxmem_supplement.zip.",
    (_opt("--data", required=True, metavar="DIR", help="release directory (see data/README.md)"),
     _opt("--out", required=True, metavar="DIR", help="where the folder and the zip are written"),
     _opt("--from", dest="from_dir", metavar="DIR",
          help="take the figures from this `reproduce` output (same data, seed, n-boot) instead of running the "
               "notebooks"),
     _opt("--seed", type=int, default=None, metavar="N",
          help="bootstrap seed of the run (default 0; with --from: checked against the run's)"),
     _opt("--n-boot", type=n_boot_arg, default=None, metavar="N",
          help="bootstrap resamples of the run (default 10000; with --from: checked against the run's)"),
     _opt("--allow-mixed", action="store_true",
          help="package outputs made otherwise than the rest of the run (a notebook re-run by hand with other "
               "parameters) instead of refusing; the README lists them"),
     _opt("--jobs", type=int, default=None, metavar="N", help="notebooks run in parallel (default: cores)"),
     _opt("--no-progress", action="store_true", help="no progress bar")))


def did_you_mean(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


class Parser(argparse.ArgumentParser):
    """argparse with a did-you-mean on a wrong choice or option, said with the (sub)command's own usage."""

    def error(self, message: str):
        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            message += did_you_mean(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")

    def unknown(self, extra: list[str]):
        """Report arguments this (sub)command does not know, with the closest option."""
        flags = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", self.format_usage()))
        hints = [did_you_mean(a.split("=")[0], flags) for a in extra if a.startswith("-")]
        self.error(f"unrecognized arguments: {' '.join(extra)}" + next((h for h in hints if h), ""))


def add_option(p, opt: Opt | str, groups: dict | None = None) -> None:
    """Add ``opt`` (an :class:`Opt` or a name of :data:`OPTIONS`) to parser ``p``, in its help group."""
    opt = OPTIONS[opt] if isinstance(opt, str) else opt
    groups = {} if groups is None else groups
    target = groups.setdefault(opt.group, p.add_argument_group(opt.group)) if opt.group else p
    kw = dict(opt.kw)
    target.add_argument(*kw.pop("flags", (opt.flag,)), **kw)


def build(sub) -> dict[str, argparse.ArgumentParser]:
    """Add every command to ``sub`` (argparse subparsers).  Returns ``{command: parser}``."""
    parsers = {}
    for name in sorted(COMMANDS):
        c = COMMANDS[name]
        fmt = argparse.RawDescriptionHelpFormatter if c.epilog else argparse.HelpFormatter
        p = sub.add_parser(name, help=c.help, description=c.description, epilog=c.epilog, formatter_class=fmt,
                           add_help=name != "table")
        groups: dict = {}
        for o in c.options:
            add_option(p, o, groups)
        p.set_defaults(module=name.replace("-", "_"), parser=p)
        parsers[name] = p
    return parsers


def options_of(command: str) -> list[Opt]:
    """The options of ``command``."""
    return [OPTIONS[o] if isinstance(o, str) else o for o in COMMANDS[command].options]


def not_applying(command: str, args, kind: str) -> None:
    """An :class:`InputError` naming every option given to ``command`` that does not apply to ``kind``
    (``voxmem``, ``amc_release``, ``longmemeval``, ``amc_runs``), with the command's reason."""
    letter = next(k for k, v in KIND_LETTERS.items() if v == kind)
    given = [o.flag for o in options_of(command) if letter not in o.kinds and o.flag.startswith("--")
             and (v := o.value(args)) is not None and v is not False and v != o.kw.get("default")]
    if given:
        why = "; ".join(filter(None, (COMMANDS[command].why.get(k) for k in (kind, *given))))
        names = ", ".join(given[:-1]) + " and " + given[-1] if len(given) > 1 else given[0]
        raise InputError(f"{names} {'does' if len(given) == 1 else 'do'} not apply to {_KIND_WORDS[kind]}"
                         + (f" ({why})" if why else ""), given[0].lstrip("-"))
