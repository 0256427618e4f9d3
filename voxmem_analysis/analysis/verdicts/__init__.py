"""Analyses that assume no benchmark's labels: slicing, paired system comparison, scaling, judges.

Every function takes a long frame (polars or pandas, one row per verdict: VoxMem's ``Release.frame`` and the
LongMemEval frame alike) and the *names* of its columns, and returns a tidy pandas DataFrame.  Conventions:
accuracy is ``100 * sum(value) / n`` over the ``scored`` rows (a null value counts 0), through
:func:`voxmem_analysis.analysis.accuracy.accuracy_by_code`; percent and percentage points, retention a ratio;
columns ``n``, ``n_correct``, ``<stat>_ci_low`` / ``<stat>_ci_high``, ``<stat>_ci_flag``, ``ci_level``,
``interval``, ``change`` = comparison - baseline.  Items are the resampling unit of every bootstrap and the
pairing unit of comparisons; every slice, pair or group is resampled afresh with the seed, so any row can be
reproduced from its own data.  The type column (:data:`TYPE_COLUMNS`) is pooled into ``overall`` rows and averaged
into ``macro`` rows.  Bootstrap settings are one :class:`~voxmem_analysis.stats.BootstrapSettings` (``settings=``).
No sign of a change is assumed.
"""
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
