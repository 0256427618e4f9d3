"""Analyses that assume no benchmark's labels (VoxMem and LongMemEval frames alike): slices, paired comparisons,
scaling and judge agreement over a long frame and the names of its columns, each returning a tidy DataFrame.

Accuracy is ``100 * sum(value) / n`` over the ``scored`` rows; items are the resampling and pairing unit, every
row resampled afresh with the seed; the type column is pooled into ``overall`` rows and averaged into ``macro``."""
from __future__ import annotations

from voxmem_analysis.analysis.verdicts._frames import INTERVALS, MACRO, OVERALL, TYPE_COLUMNS, level_order
from voxmem_analysis.analysis.verdicts.compare import compare_systems
from voxmem_analysis.analysis.verdicts.judges import judge_agreement, judge_agreement_pairs
from voxmem_analysis.analysis.verdicts.scaling import scaling_correlations, scaling_table
from voxmem_analysis.analysis.verdicts.slices import pooled_across, slice_accuracy
from voxmem_analysis.errors import AnalysisInputError
from voxmem_analysis.stats.settings import INTERVALS as BOOTSTRAP_INTERVALS
from voxmem_analysis.stats.settings import BootstrapSettings

__all__ = [
    "TYPE_COLUMNS", "OVERALL", "MACRO", "INTERVALS", "BOOTSTRAP_INTERVALS", "BootstrapSettings", "AnalysisInputError",
    "level_order",
    "slice_accuracy", "pooled_across", "compare_systems", "scaling_table", "scaling_correlations",
    "judge_agreement", "judge_agreement_pairs",
]
