"""``voxmem-analysis table NAME --data DIR --format long|csv|md|tex``: print one artifact."""
from __future__ import annotations

import sys

from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.commands._shared import add_data_args, fail, load, synthetic_banner


def register(sub) -> None:
    p = sub.add_parser("table", help="print one of the paper's tables/figure tables (see --list)")
    p.add_argument("name", nargs="?", help="artifact name, e.g. table15, fig5, table18")
    add_data_args(p, required=False)
    p.add_argument("--format", choices=("long", "csv", "md", "tex"), default="long",
                   help="long: CSV artifact,row,column,value (default)")
    p.add_argument("--seed", type=int, default=0, help="seed of bootstrap intervals")
    p.add_argument("--n-boot", type=int, default=10_000, help="bootstrap resamples")
    p.add_argument("--list", action="store_true", help="list the artifact names")
    p.set_defaults(func=run)


def run(args) -> int:
    from voxmem_analysis import artifacts

    if args.list or not args.name:
        for n in artifacts.names():
            print(f"{n:10s} {artifacts.get(n).title}")
        return 0
    if not args.data:
        print("--data DIR is required", file=sys.stderr)
        return 2
    try:
        art = artifacts.get(args.name)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    try:
        release = load(args)
    except VoxMemDataError as exc:
        return fail(exc)
    synthetic_banner(release)
    try:
        table = art(release, seed=args.seed, n_boot=args.n_boot)
    except VoxMemDataError as exc:  # e.g. the release lacks the part this artifact needs
        return fail(exc)
    from voxmem_analysis.output import SYNTHETIC_LABEL, table_to_latex, table_to_markdown

    title = f"{art.title} [{SYNTHETIC_LABEL}]" if release.synthetic else art.title

    if args.format == "long":
        artifacts.to_long(table, art.name).to_csv(sys.stdout, index=False, float_format="%.6g", lineterminator="\n")
    elif args.format == "csv":
        table.to_csv(sys.stdout, float_format="%.6g", lineterminator="\n")
    elif args.format == "md":
        sys.stdout.write(table_to_markdown(table, caption=title))
    else:
        sys.stdout.write(table_to_latex(table, caption=title, label=f"tab:{art.name}"))
    return 0
