"""SYNTHETIC VoxMem release generator (not real model output).

``write_release(out_dir, seed=DEFAULT_SEED)`` writes a complete release directory in the
public harness's format whose verdicts are calibrated to the paper's published numbers;
``check.calibration_report(...)`` compares them.
"""
from voxmem_analysis.synth.release import DEFAULT_SEED, build, write_release

__all__ = ["DEFAULT_SEED", "build", "write_release"]
