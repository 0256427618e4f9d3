"""Which notebook made each output, with which parameters, from which release and version, and its bytes.

Every file :mod:`voxmem_analysis.output` writes into an :class:`OutputFolder` gets a record in
``OUT/provenance.json`` (``{"format": "voxmem-provenance/2", "files": {"tables/x.csv": {"notebook", "parameters",
"release": {"name", "path", "fingerprint", "synthetic"}, "version", "sha256"}}}``; ``/1``, without digests, is
still read), whoever runs the notebook.  :func:`findings` names every output made otherwise than its run,
without a record, or whose bytes are no longer those recorded.
"""
from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from voxmem_analysis import __version__
from voxmem_analysis.io import fingerprint
from voxmem_analysis.io.fingerprint import release_fingerprint
from voxmem_analysis.paths import resolve
from voxmem_analysis.writing import atomic_text

__all__ = ["PROVENANCE_FILE", "FORMAT", "OutputFolder", "read_records", "write_records", "merge_records",
           "notebook_source", "params_text", "Finding", "findings", "grouped", "IGNORED_PARAMETERS", "file_digest",
           "has_digests"]

PROVENANCE_FILE = "provenance.json"
FORMAT = "voxmem-provenance/2"
_FORMATS = (FORMAT, "voxmem-provenance/1")
#: The key of a record holding the SHA-256 of the file's bytes (hex).
DIGEST = "sha256"
_LOCK = ".provenance.lock"
#: Parameters that say where things are, not what was computed: not compared between outputs.
IGNORED_PARAMETERS = frozenset({"data_dir", "amc_data_dir", "out_dir", "manifest", "questions", "interactive"})


def _json_value(v):
    """``v`` as JSON can hold it (paths and other objects as text), so records compare exactly."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    return str(v)


def _release_record(release) -> dict | None:
    """``name``, ``path``, ``fingerprint`` and ``synthetic`` of a loaded release (None: no release)."""
    if release is None:
        return None
    path = Path(getattr(release, "path", "") or "")
    shown = str(path)
    with contextlib.suppress(ValueError):
        shown = path.resolve().relative_to(resolve(".").resolve()).as_posix()
    return {"name": str(getattr(release, "name", path.name)), "path": shown,
            "fingerprint": release_fingerprint(path) if str(path) else None,
            "synthetic": bool(getattr(release, "synthetic", False))}


class OutputFolder(os.PathLike):
    """The folder ``path`` (:func:`voxmem_analysis.paths.resolve`), a path wherever a folder goes, recording every
    file the ``output`` functions save into it as made by ``notebook`` from ``release`` with ``parameters``."""

    def __init__(self, path, *, notebook: str, release=None, parameters: dict | None = None):
        self.path = resolve(path)
        self.source = {"notebook": str(notebook), "parameters": _json_value(dict(parameters or {})),
                       "release": _release_record(release), "version": __version__}

    def __fspath__(self) -> str:
        return str(self.path)

    @property
    def notebook(self) -> str:
        """The notebook writing (:func:`voxmem_analysis.output.save_finding` names its file after it)."""
        return self.source["notebook"]

    def __truediv__(self, other) -> Path:
        return self.path / other

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"OutputFolder({str(self.path)!r}, notebook={self.source['notebook']!r})"

    def record(self, files) -> None:
        """Record ``files`` (paths inside this folder) as made by this notebook, with their digests."""
        root = self.path.resolve()
        new = {Path(f).resolve().relative_to(root).as_posix(): {**self.source, DIGEST: file_digest(f)} for f in files}
        if new:
            update_records(self.path, new)


def file_digest(path) -> str | None:
    """SHA-256 (hex) of the bytes of ``path``; None when it cannot be read."""
    try:
        return fingerprint.file_digest(path)
    except OSError:
        return None


def has_digests(records: dict[str, dict]) -> bool:
    """Whether every record carries its file's digest (not so in records written before digests)."""
    return all(DIGEST in r for r in records.values())


def read_records(out) -> dict[str, dict]:
    """``{file relative to OUT: record}`` of ``OUT/provenance.json`` (none: empty; not a record: ``ValueError``)."""
    path = Path(out) / PROVENANCE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") not in _FORMATS or not isinstance(data.get("files"), dict):
        raise ValueError(f"{path}: not a provenance record (format {FORMAT!r} expected)")
    return {str(k): v for k, v in data["files"].items() if isinstance(v, dict)}


def write_records(out, records: dict[str, dict]) -> Path:
    """Write ``OUT/provenance.json`` (sorted, deterministic; temporary file + rename)."""
    path = Path(out) / PROVENANCE_FILE
    text = json.dumps({"format": FORMAT, "files": dict(sorted(records.items()))}, indent=1, sort_keys=True) + "\n"
    return atomic_text(path, text)


@contextlib.contextmanager
def _locked(folder: Path):
    """An exclusive lock on ``folder`` while its record is updated (kernels may share a folder); none without fcntl."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(folder / _LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def update_records(out, new: dict[str, dict]) -> None:
    """Add or replace the records of some files of ``OUT``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder):
        try:
            records = read_records(folder)
        except ValueError:
            records = {}   # an unreadable record is replaced by what is known now
        records.update(new)
        write_records(folder, records)


def merge_records(out, parts: list[dict[str, dict]]) -> dict[str, dict]:
    """The records of several staging folders, in order (a later one wins), written to ``OUT``."""
    merged = {k: v for p in parts for k, v in p.items()}
    write_records(out, merged)
    return merged


def params_text(params: dict) -> str:
    """``n_boot=10000, seed=0``: the parameters that say what was computed (not where things are), or ``none``."""
    return ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()) if k not in IGNORED_PARAMETERS) or "none"


def notebook_source(records: dict[str, dict], notebook: str) -> dict | None:
    """The record most of ``notebook``'s files carry, digests aside (None when it recorded none)."""
    mine = [json.dumps({k: v for k, v in r.items() if k != DIGEST}, sort_keys=True)
            for r in records.values() if r.get("notebook") == notebook]
    if not mine:
        return None
    return json.loads(Counter(mine).most_common(1)[0][0])


# ----------------------------------------------------------------------------- consistency
@dataclass(frozen=True)
class Finding:
    """An output whose record differs from the run it sits in (``what``: one sentence per difference)."""

    file: str
    notebook: str | None
    what: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.file} ({self.notebook or 'no notebook'}): " + "; ".join(self.what)


def grouped(found: list[Finding]) -> list[tuple[str, str]]:
    """``(output, what differs)``, the files of one output together (``tables/table18 (.csv, .long.csv, .md)``)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for f in found:
        head, dot, ext = f.file.partition(".")
        key = (head if dot else f.file, "; ".join(f.what))
        groups.setdefault(key, []).append(f".{ext}" if dot else "")
    return [(f"{h} ({', '.join(e for e in exts if e)})" if any(exts) else h, what) for (h, what), exts in groups.items()]


def _shown(v) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def _differences(rec: dict, ref: dict, ref_label: str) -> list[str]:
    out = []
    p, q = rec.get("parameters") or {}, ref.get("parameters") or {}
    for k in sorted((set(p) | set(q)) - IGNORED_PARAMETERS):
        if p.get(k) != q.get(k):
            out.append(f"{k} = {_shown(p.get(k))} ({ref_label}: {_shown(q.get(k))})")
    fp, fq = (rec.get("release") or {}).get("fingerprint"), (ref.get("release") or {}).get("fingerprint")
    if fp != fq:
        name = (rec.get("release") or {}).get("path") or "?"
        out.append(f"made from another release or version of the data ({name}, {str(fp)[:15]}...; "
                   f"{ref_label}: {str(fq)[:15]}...)")
    if rec.get("version") != ref.get("version"):
        out.append(f"voxmem-analysis {rec.get('version')} ({ref_label}: {ref.get('version')})")
    return out


def _output_files(out: Path) -> list[str]:
    """The files of ``OUT/figures``, ``OUT/tables`` and ``OUT/findings`` (the outputs the notebooks write)."""
    found = []
    for sub in ("figures", "tables", "findings"):
        d = out / sub
        if d.is_dir():
            found += [p.relative_to(out).as_posix() for p in d.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return sorted(found)


def findings(out, run: dict | None = None) -> list[Finding]:
    """Outputs of ``OUT`` made otherwise than the rest: each file without a record, whose bytes are not those
    recorded, or whose record differs from its notebook's (in ``run``, run.json, else the one most of its files
    carry: parameters other than paths, the release's fingerprint, the version); each notebook whose ``seed`` or
    ``n_boot`` differ from the others', or that read another version of a release folder."""
    out = Path(out)
    records = read_records(out)
    refs: dict[str, dict] = {}
    for nb in (run or {}).get("notebooks", []) + (run or {}).get("earlier", []):
        if isinstance(nb, dict) and isinstance(nb.get("provenance"), dict):
            refs[nb["name"]] = nb["provenance"]
    found: list[Finding] = []
    for f in _output_files(out):
        rec = records.get(f)
        if rec is None:
            found.append(Finding(f, None, ("no provenance record: not written by a notebook of this workbook",)))
            continue
        nb = rec.get("notebook")
        ref = refs.get(nb) or notebook_source(records, nb)
        label = "the run" if nb in refs else f"the other outputs of {nb}"
        diff = _differences(rec, ref, label) if ref else []
        if DIGEST in rec and file_digest(out / f) != rec[DIGEST]:
            diff.append("its bytes are not those its notebook wrote (changed or replaced since)")
        if diff:
            found.append(Finding(f, nb, tuple(diff)))
    found += _across_notebooks(records, refs)
    return found


def _across_notebooks(records: dict[str, dict], refs: dict[str, dict]) -> list[Finding]:
    """Notebooks whose ``seed`` or ``n_boot``, or version of a release folder, differ from most notebooks'."""
    names = sorted({r.get("notebook") for r in records.values() if r.get("notebook")} | set(refs))
    src = {n: refs.get(n) or notebook_source(records, n) or {} for n in names}
    out = []
    for key in ("seed", "n_boot"):
        values = {n: (s.get("parameters") or {})[key] for n, s in src.items() if key in (s.get("parameters") or {})}
        out += _odd_ones(values, lambda n, v, common: f"{key} = {_shown(v)} (the other notebooks: {common})")
    by_path: dict[str, dict[str, str]] = {}
    for n, s in src.items():
        rel = s.get("release") or {}
        if rel.get("path") and rel.get("fingerprint"):
            by_path.setdefault(rel["path"], {})[n] = rel["fingerprint"]
    for path, fps in by_path.items():
        out += _odd_ones(fps, lambda n, v, common: (f"read another version of {path} than the other notebooks "
                                                    f"({v[:15]}...)"))
    return out


def _odd_ones(values: dict, say) -> list[Finding]:
    """A finding per notebook whose value is not the most common (``say(name, value, common)``)."""
    if len(set(map(json.dumps, values.values()))) <= 1:
        return []
    ranked = Counter(json.dumps(v) for v in values.values()).most_common()
    if ranked[0][1] == ranked[1][1]:   # no majority: every notebook is named, against the others' values
        others = lambda n: ", ".join(sorted({json.dumps(v) for m, v in values.items() if m != n}))  # noqa: E731
        return [Finding(f"notebook {n}", n, (say(n, v, others(n)),)) for n, v in values.items()]
    common = ranked[0][0]
    return [Finding(f"notebook {n}", n, (say(n, v, common),)) for n, v in values.items() if json.dumps(v) != common]
