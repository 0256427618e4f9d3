"""``voxmem-analysis export-frame --data DIR --out FILE``: write the tidy verdict frame."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import VoxMemDataError
from ._common import add_data_args, fail, load


def register(sub) -> None:
    p = sub.add_parser("export-frame", help="write the tidy verdict frame as Parquet or CSV")
    add_data_args(p)
    p.add_argument("--out", required=True, metavar="FILE", help="output file ending in .parquet or .csv")
    p.set_defaults(func=run)


def run(args) -> int:
    out = Path(args.out)
    if out.suffix not in (".parquet", ".csv"):
        print(f"--out must end in .parquet or .csv, got {out.name!r}")
        return 2
    try:
        release = load(args)
    except VoxMemDataError as exc:
        return fail(exc)
    frame = release.frame.with_columns(release.frame["budget"].cast(str))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    if out.suffix == ".parquet":
        frame.write_parquet(tmp)
    else:
        frame.write_csv(tmp)
    os.replace(tmp, out)  # never leave a half-written file behind
    print(f"wrote {frame.height} predictions x {frame.width} columns to {out}"
          + ("  [SYNTHETIC DATA - not real model output]" if release.synthetic else ""))
    return 0
