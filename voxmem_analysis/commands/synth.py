"""``voxmem-analysis synth --out DIR [--seed N] [--check]``: write (or check) the SYNTHETIC release."""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd

from voxmem_analysis.commands._guards import check_outputs
from voxmem_analysis.errors import InputError
from voxmem_analysis.io import load_release
from voxmem_analysis.reproduce.scoreboard import reproduction_table
from voxmem_analysis.synth import amc as synth_amc
from voxmem_analysis.synth.check import calibration_report
from voxmem_analysis.synth import release as synth_release
from voxmem_analysis.writing import merge_folder


def run(args) -> int:
    amc = args.benchmark == "amc"
    if not (args.out or args.data):
        raise InputError(f"{'--benchmark amc: ' if amc else ''}give --out DIR (or --check --data DIR)", "out")
    check_outputs(folders={"--out": args.out}, inputs=[args.data])
    seed = (synth_amc if amc else synth_release).DEFAULT_SEED if args.seed is None else args.seed
    if args.out:
        t0 = time.perf_counter()
        _staged(args.out, lambda folder: (synth_amc.write_amc_release if amc else synth_release.write_release)(
            folder, seed=seed))
        print(f"SYNTHETIC Audio MultiChallenge release written to {args.out} (seed {seed}); calibration report: "
              f"{args.out}/CALIBRATION.md" if amc else
              f"SYNTHETIC release written to {args.out} (seed {seed}) in {time.perf_counter() - t0:.1f}s")
    if not args.check:
        return 0
    return _check_amc(args.out or args.data) if amc else _check(args.out or args.data, args.n_boot)


def _staged(out, write) -> None:
    """``write(folder)`` into a folder beside ``out``, moved into ``out`` only when complete
    (:func:`voxmem_analysis.writing.merge_folder`): a failed write leaves ``out`` as it was."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
    try:
        write(stage / out.name)
        merge_folder(stage / out.name, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _check_amc(target) -> int:
    """The SYNTHETIC Audio MultiChallenge release against the paper; 1 when a number is off unexplained."""
    rep = synth_amc.calibration_report(target)
    off = rep[~rep["within_tolerance"]]
    known = synth_amc.known_misprints()
    unexplained = [r for r in off.itertuples(index=False) if (r.artifact, r.row, r.column) not in known]
    for r in off.itertuples(index=False):
        tag = "known misprint" if (r.artifact, r.row, r.column) in known else "OUT OF TOLERANCE"
        print(f"{tag}: {r.artifact} {r.row} {r.column}: published {r.published:g}, reproduced {r.reproduced:.4f}")
    print(f"[AMC] {int(rep['within_tolerance'].sum())}/{len(rep)} published numbers within tolerance; "
          f"{len(off) - len(unexplained)} known misprint(s); {len(unexplained)} unexplained")
    return 1 if unexplained else 0


def _check(target, n_boot: int) -> int:
    """The generator's own calibration check, then every number the paper prints recomputed by the workbook's
    analyses (also the parts the first does not see); 1 when a calibrated number is off."""
    rep = calibration_report(target, n_boot=n_boot)
    with pd.option_context("display.max_rows", None, "display.width", 200):
        print(rep.to_string(index=False))
    bad = rep[(rep["kind"] == "calibrated") & ~rep["within_tolerance"]]
    emergent_bad = rep[(rep["kind"] != "calibrated") & ~rep["within_tolerance"]]
    print(f"\n[generator's own check] {len(rep)} numbers; calibrated out of tolerance: {len(bad)}; "
          f"emergent/derived out of tolerance: {len(emergent_bad)}")
    repro = reproduction_table(load_release(target), n_boot=n_boot)
    miss = repro[repro["reproduced"].isna()]
    off = repro[repro["reproduced"].notna() & ~repro["within_tolerance"].astype(bool)]
    if len(off) or len(miss):
        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(pd.concat([off, miss]).to_string(index=False))
    by_kind = repro.groupby("kind")["within_tolerance"].agg(["sum", "count"])
    kinds = ", ".join(f"{k}: {int(r['sum'])}/{int(r['count'])}" for k, r in by_kind.iterrows())
    print(f"[workbook analyses vs the paper] {len(repro)} published numbers within tolerance by kind: {kinds}; "
          f"not reproduced: {len(miss)}")
    return 1 if len(bad) or len(off[off["kind"] == "calibrated"]) or len(miss[miss["kind"] == "calibrated"]) else 0
