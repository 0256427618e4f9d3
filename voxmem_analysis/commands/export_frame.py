"""``voxmem-analysis export-frame --data DIR --out FILE``: write the tidy verdict frame."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from voxmem_analysis.commands._shared import add_data_args, load


def register(sub) -> None:
    p = sub.add_parser("export-frame", help="write the tidy verdict frame as Parquet or CSV")
    add_data_args(p)
    p.add_argument("--out", required=True, metavar="FILE", help="output file ending in .parquet or .csv")
    p.set_defaults(func=run)


def run(args) -> int:
    out = Path(args.out)
    if out.suffix not in (".parquet", ".csv"):
        print(f"--out must end in .parquet or .csv, got {out.name!r}", file=sys.stderr)
        return 2
    if out.is_dir():
        print(f"--out {str(out)!r} is a directory; give a file name ending in .parquet or .csv", file=sys.stderr)
        return 2
    from voxmem_analysis.commands._guards import check_outputs, release_inputs

    if check_outputs("export-frame", files={"--out": args.out}, inputs=release_inputs(args.data)):
        return 2
    if _is_amc(args.data):
        return _run_amc(args, out)
    release = load(args)
    frame = release.frame.with_columns(release.frame["budget"].cast(str))
    return _write(frame, out, "predictions", synthetic=release.synthetic)


def _write(frame, out: Path, rows: str, *, synthetic: bool) -> int:
    """Write a polars *frame* to *out* (Parquet or CSV by suffix), whole or not at all; exit code."""
    from voxmem_analysis.writing import atomic_write

    try:
        atomic_write(out, lambda tmp: _write_file(frame, tmp, out.suffix))
    except OSError as exc:
        print(f"error: export-frame: cannot write {str(out)!r}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {frame.height} {rows} x {frame.width} columns to {out}"
          + ("  [SYNTHETIC DATA - not real model output]" if synthetic else ""))
    return 0


#: Rows of the CSV written per slice (the slice is made in memory, then written by Python).
CSV_SLICE_ROWS = 100_000


def _write_file(frame, tmp: Path, suffix: str) -> None:
    """``frame`` as Parquet or CSV into ``tmp``, every write by Python, so that a full disk is an
    :class:`OSError` naming the file.  polars never writes the file itself: its Parquet writer reports
    a full disk as a ComputeError, and a CSV write failing in its worker threads could abort the
    process at exit; the CSV goes in slices of :data:`CSV_SLICE_ROWS` rows, header first."""
    import io

    with open(tmp, "wb") as fh:
        if suffix == ".parquet":
            buf = io.BytesIO()
            frame.write_parquet(buf)
            fh.write(buf.getbuffer())
            return
        for i, part in enumerate(frame.iter_slices(CSV_SLICE_ROWS) if frame.height else [frame]):
            buf = io.BytesIO()
            part.write_csv(buf, include_header=i == 0)
            fh.write(buf.getbuffer())


def _is_amc(path) -> bool:
    from voxmem_analysis.io import is_amc_release

    return is_amc_release(path)


def _run_amc(args, out: Path) -> int:
    """The rubric-level frame of an Audio MultiChallenge release (one row per model x modality x rubric item)."""
    import polars as pl

    from voxmem_analysis.commands._amc import load_release

    release = load_release(args)   # every finding on stderr, as for any release
    frame = pl.from_pandas(release.frame())
    return _write(frame, out, "rubric verdicts", synthetic=release.synthetic)
