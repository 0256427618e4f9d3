"""One notebook of the workbook (``notebooks/NN_name.py``): found (:func:`discover`, :func:`select`), planned
(:func:`plan_parameters`: what to inject, or why it is skipped), executed (:func:`execute_notebook`: papermill in
a new kernel, in its own staging folder, its stderr in ``OUT/notebooks/NAME.log``; a failure is a result)."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from voxmem_analysis.errors import InputError, UnknownNameError
from voxmem_analysis.reproduce import mode
from voxmem_analysis.textlimits import read_regular

__all__ = ["NOTEBOOKS_DIR", "REPO_ROOT", "KERNEL_NAME", "STAGING", "ErrorCell", "NotebookResult", "discover", "select",
           "declared_parameters", "plan_parameters", "missing_parts", "not_for_release", "is_amc", "is_paper_release",
           "execute_notebook", "skipped_sections", "nothing_written", "display_path", "outputs_brief"]

#: Folders resolved from the package's location, never from the working directory.
PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_DIR.parent
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
LONGMEMEVAL_EXAMPLE = REPO_ROOT / "data" / "examples" / "longmemeval"
#: The bundled SYNTHETIC Audio MultiChallenge release (notebooks declaring ``amc_data_dir``).
AMC_EXAMPLE = REPO_ROOT / "data" / "synthetic-amc"
KERNEL_NAME = "python3"
#: Folder of ``OUT`` (in the staging copy) where each notebook writes before its files are collected.
STAGING = ".staging"
_NOTEBOOK_NAME = re.compile(r"^\d{2}_[A-Za-z0-9_]+$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXCERPT_LINES = 12


# ----------------------------------------------------------------------------- records
@dataclass
class ErrorCell:
    """Where and how a notebook failed."""

    cell_index: int | None      # index of the failing cell in the executed notebook
    exec_count: int | None      # its ``In [n]`` number
    line: int | None            # first line of the cell's source in the ``.py`` script
    source: str                 # the cell's source (first lines)
    ename: str                  # exception class
    evalue: str                 # exception message
    traceback: str              # the traceback's last lines, colours stripped

    def headline(self) -> str:
        where = f"cell {self.cell_index}" if self.cell_index is not None else "before any cell ran"
        if self.line is not None:
            where += f" (script line {self.line})"
        return f"{where}: {self.ename}: {self.evalue}".rstrip(": ")


@dataclass
class NotebookResult:
    """Outcome of one notebook (``status``: ``ok``, ``failed`` or ``skipped``)."""

    name: str
    path: str
    status: str
    seconds: float = 0.0
    outputs: list[str] = field(default_factory=list)     # relative to OUT, sorted
    executed: str | None = None                          # relative to OUT
    parameters: dict = field(default_factory=dict)
    reason: str | None = None                            # why skipped
    error: ErrorCell | None = None
    collisions: list[str] = field(default_factory=list)  # outputs another notebook also wrote
    provenance: dict | None = None                       # the record its outputs carry (provenance.json)
    sections_skipped: list[list[str]] = field(default_factory=list)  # [section, reason] it printed as skipped

    def to_dict(self) -> dict:
        return asdict(self)



# ----------------------------------------------------------------------------- discovery
def discover(notebooks_dir=None) -> list[Path]:
    """The notebooks ``NN_name.py`` of ``notebooks_dir`` (default: the repository's), sorted."""
    d = Path(notebooks_dir) if notebooks_dir is not None else NOTEBOOKS_DIR
    if not d.is_dir():
        raise InputError(f"notebooks directory {str(d)!r} does not exist (pass --notebooks DIR)", "notebooks")
    return sorted((p for p in d.glob("*.py") if _NOTEBOOK_NAME.match(p.stem)), key=lambda p: p.name)


def select(paths: list[Path], only) -> list[Path]:
    """Keep the notebooks named in ``only`` (``"10_main_results"``, ``"main_results"`` or ``"10"``)."""
    if not only:
        return list(paths)
    wanted = [w.strip() for w in (only.split(",") if isinstance(only, str) else only) if w.strip()]
    keep: list[Path] = []
    for w in wanted:
        w = w[:-3] if w.endswith(".py") else w
        hits = [p for p in paths if w in (p.stem, p.stem.split("_", 1)[0], p.stem.split("_", 1)[-1])]
        if not hits:
            raise UnknownNameError(f"no notebook named {w!r}; known: {', '.join(p.stem for p in paths)}", "only")
        keep += [p for p in hits if p not in keep]
    return sorted(keep, key=lambda p: p.name)


def declared_parameters(source: str) -> dict:
    """Names assigned in a ``parameters`` cell and their literal defaults (``...`` if not literal)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict = {}
    for node in tree.body:
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for t in targets:
            if isinstance(t, ast.Name):
                try:
                    out[t.id] = ast.literal_eval(value)
                except (ValueError, SyntaxError, TypeError):
                    out[t.id] = ...
    return out


def outputs_brief(outputs: list[str]) -> str:
    """``12 (figures 3, tables 9)``: the outputs of a notebook counted by folder."""
    kinds = Counter(o.split("/", 1)[0] if "/" in o else "other" for o in outputs)
    return f"{len(outputs)}" + (" (" + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + ")" if kinds else "")


def display_path(p) -> str:
    """``p`` relative to the repository when inside it, else as given; ``?`` when empty."""
    if not p:
        return "?"
    try:
        return Path(p).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(Path(p))


def _longmemeval_inputs() -> dict:
    """``manifest`` (and ``questions`` when there is one) of the bundled LongMemEval example."""
    manifest = LONGMEMEVAL_EXAMPLE / "manifest.csv"
    if not manifest.is_file():
        return {}
    found = {"manifest": str(manifest)}
    for pat in ("questions.*", "*question*.json", "*question*.jsonl", "*question*.csv"):
        hits = sorted(p for p in LONGMEMEVAL_EXAMPLE.glob(pat) if p.is_file())
        if hits:
            found["questions"] = str(hits[0])
            break
    return found


def _release_meta(path) -> dict:
    try:
        meta = json.loads(read_regular(Path(path) / "release.json").decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def is_amc(path) -> bool:
    return str(_release_meta(path).get("benchmark", "")).lower() == "audio-multichallenge"


def is_paper_release(path) -> bool:
    return mode.is_paper_release(_release_meta(path))


def _amc_release_dir(data_dir, include_examples: bool) -> str | None:
    """The AMC release a notebook runs on: ``data_dir``'s, or the bundled one (paper's release, examples) or None."""
    if is_amc(data_dir):
        return str(data_dir)
    bundled = include_examples or is_paper_release(data_dir)
    return str(AMC_EXAMPLE) if bundled and is_amc(AMC_EXAMPLE) else None


def not_for_release(script: str, data_dir) -> str | None:
    """Why a notebook does not run on ``data_dir``: on an Audio MultiChallenge release only those taking
    ``amc_data_dir`` run."""
    if not is_amc(data_dir) or re.search(r"^amc_data_dir\s*[:=]", script, re.MULTILINE):
        return None
    return "not a VoxMem release (an Audio MultiChallenge release: only the AMC notebooks run on it)"


_REQUIRES = re.compile(r"^#\s*requires:\s*(.+)$", re.MULTILINE)


def missing_parts(script: str, data_dir) -> list[str]:
    """The optional parts a ``# requires: judge2, ablation`` line names that ``data_dir`` lacks (no file below)."""
    m = _REQUIRES.search(script)
    if not m:
        return []
    parts = [p.strip() for p in m.group(1).split(",") if p.strip()]
    root = Path(data_dir)
    return [p for p in parts if not (root / p).is_dir() or not any(f.is_file() for f in (root / p).rglob("*"))]


def plan_parameters(declared: dict, *, data_dir: str, out_dir: str, seed: int, n_boot: int,
                    overrides: dict | None = None, include_examples: bool = True) -> tuple[dict, str | None]:
    """``(parameters to inject into a notebook declaring `declared`, why it is skipped or None)``; one taking a
    LongMemEval ``manifest`` runs on the bundled example, only with ``include_examples``."""
    given = {"data_dir": data_dir, "out_dir": out_dir, "seed": seed, "n_boot": n_boot, "interactive": False}
    inject = {k: v for k, v in given.items() if k in declared}
    if "manifest" in declared and not include_examples:
        return {}, ("runs on the bundled LongMemEval example (synthetic), not on this release; "
                    "add --include-examples to run it")
    if "manifest" in declared:
        lme = _longmemeval_inputs()
        if not lme:
            return {}, f"takes a LongMemEval `manifest`; no example at {display_path(LONGMEMEVAL_EXAMPLE / 'manifest.csv')}"
        inject.update({k: v for k, v in lme.items() if k in declared})
    elif "amc_data_dir" in declared:
        amc = _amc_release_dir(data_dir, include_examples)
        if amc is None:
            return {}, ("takes an Audio MultiChallenge release (`amc_data_dir`): --data is none, and the bundled "
                        f"synthetic one ({display_path(AMC_EXAMPLE)}) runs only on the paper's release or with "
                        "--include-examples")
        inject["amc_data_dir"] = amc
    elif "data_dir" not in declared:
        return {}, "its parameters cell declares neither `data_dir` nor `manifest`"
    for k, v in (overrides or {}).items():
        if k in declared:
            inject[k] = v
    return inject, None


# ----------------------------------------------------------------------------- one notebook
def _script_line(script: str, cell_source: str) -> int | None:
    """Line of ``script`` where the cell starts: the whole cell matched as a block, else its first line alone."""
    src = [l.rstrip() for l in cell_source.splitlines()]
    while src and not src[0]:
        src.pop(0)
    if not src:
        return None
    lines = [l.rstrip() for l in script.splitlines()]
    k = len(src)
    for i in range(len(lines) - k + 1):
        if lines[i:i + k] == src:
            return i + 1
    return next((i for i, l in enumerate(lines, 1) if l == src[0]), None)


def _error_from_exception(exc, script: str) -> ErrorCell:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        src = exc.source or ""
        tb = _ANSI.sub("", "\n".join(exc.traceback or []))
        return ErrorCell(exc.cell_index, exc.exec_count, _script_line(script, src),
                         "\n".join(src.splitlines()[:_EXCERPT_LINES]), exc.ename, str(exc.evalue),
                         "\n".join(tb.splitlines()[-15:]))
    # kernel death, time-out, conversion failure...: no cell to point at
    return ErrorCell(getattr(exc, "cell_index", None), None, None, "", type(exc).__name__,
                     _ANSI.sub("", str(exc)).strip()[:2000], "")


#: Seconds a new kernel may take to answer (papermill's 60 s is too short on a loaded 2-core machine).
KERNEL_START_TIMEOUT = 300


def execute_notebook(path, *, data_dir, out_dir, seed: int = 0, n_boot: int = 10_000,
                     overrides: dict | None = None, timeout: float | None = 900,
                     include_examples: bool = True) -> NotebookResult:
    """Convert and execute one notebook, its outputs into ``OUT/.staging/NAME``; a failure is in the result."""
    t0 = time.perf_counter()
    path, out = Path(path), Path(out_dir)
    name = path.stem
    stage = out / STAGING / name
    result = NotebookResult(name=name, path=str(path), status="ok")
    script = path.read_text(encoding="utf-8")
    try:
        import jupytext
        import nbformat

        other = not_for_release(script, data_dir)
        if other:
            result.status, result.reason = "skipped", other
            return result
        missing = missing_parts(script, data_dir)
        if missing:
            result.status = "skipped"
            result.reason = "the release has no " + ", ".join(f"{m}/ folder" for m in missing) + " (optional part)"
            return result
        nb = jupytext.reads(script, fmt="py:percent")
        pcell = next((c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
        if pcell is None:
            result.status, result.reason = "skipped", "no cell tagged `parameters`"
            return result
        inject, reason = plan_parameters(declared_parameters(pcell.source), data_dir=str(data_dir),
                                         out_dir=str(stage), seed=seed, n_boot=n_boot, overrides=overrides,
                                         include_examples=include_examples)
        result.parameters = {k: v for k, v in inject.items() if k != "out_dir"}
        if reason:
            result.status, result.reason = "skipped", reason
            return result
        if stage.exists():
            shutil.rmtree(stage)
        stage.mkdir(parents=True)
        nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"}
        nb.metadata.setdefault("language_info", {"name": "python"})
        src_ipynb = out / STAGING / f"{name}.input.ipynb"
        nbformat.write(nb, str(src_ipynb))
        (out / "notebooks").mkdir(parents=True, exist_ok=True)
        executed = out / "notebooks" / f"{name}.ipynb"
        result.executed = f"notebooks/{name}.ipynb"
        try:
            _execute(src_ipynb, executed, inject, stage, out / "notebooks" / f"{name}.log", timeout)
        finally:
            result.sections_skipped = skipped_sections(executed)
        src_ipynb.unlink(missing_ok=True)
    except Exception as exc:  # noqa: BLE001 - any failure is the notebook's result, not the runner's
        result.status = "failed"
        try:
            result.error = _error_from_exception(exc, script)
        except Exception:  # noqa: BLE001 - papermill itself missing
            result.error = ErrorCell(None, None, None, "", type(exc).__name__, str(exc), "")
    finally:
        result.seconds = round(time.perf_counter() - t0, 2)
    return result


_SKIPPED_LINE = re.compile(r"^(?P<section>\S.*?): skipped \u2014 (?P<reason>.+)$")


def skipped_sections(executed) -> list[list[str]]:
    """``[section, reason]`` of every line ``"<section>: skipped — <reason>"`` an executed notebook printed
    (:func:`voxmem_analysis.analysis.selection.section`), in order, once each; empty when it cannot be read."""
    try:
        nb = json.loads(Path(executed).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found: list[list[str]] = []
    for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
        for o in cell.get("outputs", []) if isinstance(cell, dict) else []:
            if not isinstance(o, dict) or o.get("output_type") != "stream" or o.get("name") != "stdout":
                continue
            text = o.get("text", "")
            for line in ("".join(text) if isinstance(text, list) else str(text)).splitlines():
                m = _SKIPPED_LINE.match(line.strip())
                if m and [m["section"], m["reason"]] not in found:
                    found.append([m["section"], m["reason"]])
    return found


def nothing_written(result: NotebookResult) -> str | None:
    """Why a notebook that ran without error is reported as skipped (it wrote nothing and skipped sections)."""
    if result.status != "ok" or result.outputs or not result.sections_skipped:
        return None
    reasons = list(dict.fromkeys(r for _, r in result.sections_skipped))
    return "wrote nothing: every section was skipped (" + "; ".join(reasons) + ")"


def _execute(src, dst, params, cwd, log_path, timeout) -> None:
    """papermill in a new kernel working in ``cwd``, its standard error (this process's fd 2) in ``log_path``."""
    import logging

    import papermill as pm

    logging.getLogger("papermill").setLevel(logging.WARNING)
    with open(log_path, "a", encoding="utf-8") as log:
        saved_fd = os.dup(2)
        sys.stderr.flush()
        os.dup2(log.fileno(), 2)
        try:
            pm.execute_notebook(str(src), str(dst), parameters=params, kernel_name=KERNEL_NAME, language="python",
                                progress_bar=False, log_output=False, cwd=str(cwd), execution_timeout=timeout,
                                start_timeout=KERNEL_START_TIMEOUT, request_save_on_cell_execute=False,
                                coalesce_streams=True)
        finally:
            sys.stderr.flush()
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
