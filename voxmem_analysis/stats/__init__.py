"""Statistics on arrays and long frames; every function returns a pandas DataFrame.

- :mod:`~voxmem_analysis.stats.bootstrap` -- paired item bootstrap (Appendix D.4, Table 18).
- :mod:`~voxmem_analysis.stats.intervals` -- Wilson score intervals.
- :mod:`~voxmem_analysis.stats.tests` -- exact McNemar test, Holm adjustment.
- :mod:`~voxmem_analysis.stats.correlation` -- Spearman correlation (Appendix D.5).
- :mod:`~voxmem_analysis.stats.agreement` -- Cohen's kappa between two judges.

Invalid arguments raise :class:`StatsInputError` (a ``ValueError``).
"""
from __future__ import annotations

from voxmem_analysis.stats._validation import StatsInputError
from voxmem_analysis.stats.agreement import cohen_kappa
from voxmem_analysis.stats.bootstrap import (
    STATISTICS,
    BootstrapMeans,
    Statistic,
    bootstrap_means,
    difference,
    iter_bootstrap_counts,
    mean_difference,
    mean_level,
    mean_ratio,
    paired_bootstrap,
    paired_bootstrap_frame,
    paired_bootstrap_matrix,
    ratio,
)
from voxmem_analysis.stats.correlation import spearman
from voxmem_analysis.stats.intervals import wilson_interval
from voxmem_analysis.stats.tests import holm, mcnemar_exact

__all__ = [
    # bootstrap
    "paired_bootstrap", "paired_bootstrap_matrix", "paired_bootstrap_frame", "bootstrap_means",
    "iter_bootstrap_counts", "BootstrapMeans", "Statistic", "STATISTICS", "difference", "ratio",
    "mean_difference", "mean_ratio", "mean_level",
    # intervals, tests, correlation, agreement
    "wilson_interval", "mcnemar_exact", "holm", "spearman", "cohen_kappa",
    # errors
    "StatsInputError",
]
