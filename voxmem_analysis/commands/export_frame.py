"""``voxmem-analysis export-frame``: write the tidy verdict frame (VoxMem predictions, an Audio MultiChallenge
release's rubric verdicts, or judged AMC runs by task or by rubric item) as Parquet or CSV."""
from __future__ import annotations

import io
from pathlib import Path

import polars as pl

from voxmem_analysis.analysis.items import amc_task_items
from voxmem_analysis.commands._common import amc_tasks, noted, open_args
from voxmem_analysis.errors import InputError
from voxmem_analysis.writing import atomic_write

#: Rows of the CSV written per slice (the slice is made in memory, then written by Python).
CSV_SLICE_ROWS = 100_000


def run(args) -> int:
    out = Path(args.out)
    if out.suffix not in (".parquet", ".csv"):
        raise InputError(f"--out must end in .parquet or .csv, got {out.name!r}", "out")
    src = open_args(args)
    if src.kind == "voxmem":
        frame, rows = src.frame.with_columns(src.frame["budget"].cast(str)), "predictions"
    elif src.kind == "amc_release":
        frame, rows = pl.from_pandas(src.frame), "rubric verdicts"
    elif args.level == "task":
        frame, rows = amc_tasks(src, args), "task results (task x system)"
    else:
        frame = pl.from_pandas(noted(amc_task_items(src.data, judge=args.judge)))
        rows = "rubric verdicts (task x system x rubric item)"
    atomic_write(out, lambda tmp: _write_file(frame, tmp, out.suffix))   # whole or not at all
    print(f"wrote {frame.height} {rows} x {frame.width} columns to {out}"
          + ("  [SYNTHETIC DATA - not real model output]" if src.synthetic else ""))
    return 0


def _write_file(frame, tmp: Path, suffix: str) -> None:
    """``frame`` as Parquet or CSV into ``tmp``, every write by Python, so that a full disk is an
    :class:`OSError` naming the file (polars writing the file itself reports it as a ComputeError, or aborts
    in its worker threads); the CSV goes in slices of :data:`CSV_SLICE_ROWS` rows, header first."""
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
