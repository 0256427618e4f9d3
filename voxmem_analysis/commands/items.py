"""``voxmem-analysis items --data DIR [--model M] [--budget B] [--wrong] [--by subtype]``: item drill-down.

One row per item the model was run on at that budget: item id, subtype, evidence type,
memory operation, gold answer, the model's response, the verdict and its scoring status
(:func:`voxmem_analysis.analysis.items.item_table`).  ``--wrong`` keeps exactly the incorrect
scored items; ``--where`` filters with a polars SQL WHERE clause on the verdict frame's columns
(e.g. ``--where "evidence_type = 'environmental_sound' AND NOT is_ar"``).  ``--model`` and ``--budget``
may be left out when the release has only one model / the model was run at one budget.
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._shared import add_data_args, emit, load, only_choice, release_budgets, synthetic_banner


def register(sub) -> None:
    p = sub.add_parser("items", help="list one model's items at one budget (gold, response, verdict); --wrong for errors",
                       description=__doc__.split("\n\n")[0])
    add_data_args(p)
    p.add_argument("--model", default=None, metavar="NAME",
                   help="model name (the predictions' `model` field; default: the release's only model)")
    p.add_argument("--budget", default=None, metavar="B",
                   help="context length: 8K, 16K, 32K or 64K (default: the only budget the model was run at)")
    p.add_argument("--wrong", action="store_true", help="only the incorrect scored items")
    p.add_argument("--by", default=None, metavar="COL[,COL...]", help="group (sort) rows by these columns, e.g. subtype")
    p.add_argument("--where", default=None, metavar="EXPR",
                   help="polars SQL WHERE clause on the verdict frame, e.g. \"subtype = 'counting' AND NOT is_ar\"")
    p.add_argument("--format", choices=("csv", "md"), default="csv", help="csv (default) or Markdown")
    p.add_argument("--out", default=None, metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(func=run)


def run(args) -> int:
    from voxmem_analysis.analysis.items import item_table
    from voxmem_analysis.commands._guards import check_outputs, release_inputs

    if check_outputs("items", files={"--out": args.out}, inputs=release_inputs(args.data)):
        return 2
    release = load(args)
    synthetic_banner(release)
    model = only_choice(args.model, release.model_order(), "--model", "model")
    budget = only_choice(args.budget, release_budgets(release, [model] if model in release.model_order() else None),
                         "--budget", "budget")
    by = [c.strip() for c in (args.by or "").split(",") if c.strip()]
    table = item_table(release, model=model, budget=budget, wrong=args.wrong, by=by, where=args.where)
    what = "incorrect scored items" if args.wrong else "items"
    title = f"{model} at {table.attrs.get('budget', budget.upper())}: {len(table)} {what}"
    if release.synthetic:
        title += " [SYNTHETIC DATA - not real model output]"
    print(f"# {title}", file=sys.stderr)
    if args.out:
        import io

        from voxmem_analysis.writing import atomic_text

        buf = io.StringIO()
        _write(table, args.format, title, buf)
        atomic_text(args.out, buf.getvalue())   # whole or not at all: an earlier file stays as it was
        print(f"# wrote {args.out}", file=sys.stderr)
    else:
        emit(table, args.format, title)
    return 0


def _write(table, fmt: str, title: str, fh) -> None:
    if fmt == "md":
        clean = table.astype(object).where(table.notna(), None)
        fh.write(f"{title}\n\n" + clean.to_markdown(index=False, missingval="") + "\n")
    else:
        table.to_csv(fh, index=False, lineterminator="\n")
