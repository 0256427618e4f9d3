"""Statistics on arrays and long frames; every function returns a pandas DataFrame.

The paired item (or cluster) bootstrap (:mod:`.bootstrap`: its engine :mod:`.resampling`, statistics
:mod:`.paired_statistics`, settings :mod:`.settings`, endpoints :mod:`.endpoints`, exact decisions :mod:`.exact`);
Wilson intervals (:mod:`.intervals`); exact McNemar, Cochran's Q, Holm (:mod:`.tests`); Spearman (:mod:`.correlation`);
Cohen's kappa (:mod:`.agreement`); power of a paired comparison (:mod:`.power`); logistic GEE (:mod:`.gee`).
SciPy, statsmodels and pingouin are imported by the functions that use them.  Bad arguments raise
:class:`StatsInputError`.
"""
from __future__ import annotations

from voxmem_analysis.stats._validation import StatsInputError, ci_level_alias, frame_columns
from voxmem_analysis.stats.agreement import cohen_kappa
from voxmem_analysis.stats.bootstrap import INTERVALS, paired_bootstrap, paired_bootstrap_frame, paired_bootstrap_matrix
from voxmem_analysis.stats.paired_statistics import (STATISTICS, Statistic, difference, mean_difference, mean_level,
                                                     mean_ratio, ratio)
from voxmem_analysis.stats.resampling import (BootstrapMeans, bootstrap_means, iter_bootstrap_counts,
                                              shared_bootstrap_counts)
from voxmem_analysis.stats.settings import BootstrapSettings, PairedSettings
from voxmem_analysis.stats.correlation import spearman
from voxmem_analysis.stats.intervals import wilson_interval
from voxmem_analysis.stats.power import (POWER_METHODS, items_needed, minimum_detectable_difference, paired_power,
                                         power_summary)
from voxmem_analysis.stats.tests import cochran_q, holm, mcnemar_exact

__all__ = [
    "paired_bootstrap", "paired_bootstrap_matrix", "paired_bootstrap_frame", "bootstrap_means", "iter_bootstrap_counts",
    "shared_bootstrap_counts", "BootstrapMeans", "Statistic", "STATISTICS", "difference", "ratio", "mean_difference",
    "mean_ratio", "mean_level", "INTERVALS", "BootstrapSettings", "PairedSettings", "wilson_interval", "mcnemar_exact",
    "holm", "cochran_q", "spearman", "cohen_kappa", "paired_power", "minimum_detectable_difference", "items_needed",
    "power_summary", "POWER_METHODS", "StatsInputError", "ci_level_alias", "frame_columns",
]
