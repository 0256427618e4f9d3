"""``voxmem-analysis supplement --data DIR --out DIR``: the paper's tables, figures and numbers, zipped.

See :mod:`voxmem_analysis.reproduce.supplement` (imported when the command runs: it imports pandas).
"""
from __future__ import annotations

import sys
from pathlib import Path

from voxmem_analysis.commands._guards import check_outputs, command_inputs, input_clash
from voxmem_analysis.errors import OutputFolderError

FOLDER = "voxmem_supplement"   # reproduce.supplement.FOLDER (that module imports pandas)


def run(args) -> int:
    from voxmem_analysis.reproduce.supplement import build_supplement  # start-up: imports pandas

    # what it reads: the release, and from --from the run's record, tables and figures
    read = command_inputs(data=args.data, extra=[Path(args.from_dir) / p for p in
                                                 ("run.json", "provenance.json", "tables", "figures", "findings")]
                          if args.from_dir else ())
    written = (Path(args.out) / FOLDER, Path(args.out) / f"{FOLDER}.zip")   # nothing else in --out is touched
    clash = next((m for m in (input_clash(w, "--out", read) for w in written) if m), None)
    if clash:
        raise OutputFolderError(clash)
    check_outputs(folders={"--out": args.out})
    if args.from_dir and not (Path(args.from_dir) / "run.json").is_file():
        raise OutputFolderError(f"--from {args.from_dir!r}: no run.json there: not a `voxmem-analysis reproduce` "
                                f"output (run `voxmem-analysis reproduce --data {args.data} --out DIR` first)")
    res = build_supplement(args.data, args.out, from_dir=args.from_dir, seed=args.seed, n_boot=args.n_boot,
                           jobs=args.jobs, progress=False if args.no_progress else None, stream=sys.stderr,
                           allow_mixed=args.allow_mixed)
    for f in res.files:
        print(f"{res.folder / f}")
    print(f"{res.zip_path}")
    for w in res.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if res.left_out:
        print("not included (not part of the paper's material): " + ", ".join(res.left_out), file=sys.stderr)
    for o, what in res.mixed:
        print(f"warning: packaged although not made like the rest of the run: {o}: {what}", file=sys.stderr)
    for a, e in res.skipped.items():
        print(f"not included: {a} was skipped: {e}", file=sys.stderr)
    for a, secs in res.sections_skipped.items():
        for sec, why in secs:
            print(f"not included: {a}, {sec}: skipped ({why})", file=sys.stderr)
    for a, e in res.artifact_errors.items():
        print(f"not included: {a}: {e.splitlines()[0]}", file=sys.stderr)
    if res.reproduce_exit_code:
        print("some notebooks failed while making the figures (see above)", file=sys.stderr)
    return res.exit_code
