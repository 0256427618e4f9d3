"""Statistics on arrays and long frames; every function returns a pandas DataFrame.

- :mod:`~voxmem_analysis.stats.bootstrap` -- paired item (or cluster) bootstrap (Appendix D.4,
  Table 18), percentile or BCa intervals with the Monte-Carlo error of each endpoint; its engine
  (:mod:`~voxmem_analysis.stats.resampling`), its statistics (:mod:`~voxmem_analysis.stats.paired_statistics`),
  its settings (:mod:`~voxmem_analysis.stats.settings`: :class:`BootstrapSettings`, :class:`PairedSettings`),
  the endpoints from replicates (:mod:`~voxmem_analysis.stats.endpoints`: ``bootstrap_interval``, each
  endpoint's Monte-Carlo error, resolution and flag) and BCa's exact decisions on counts
  (:mod:`~voxmem_analysis.stats.exact`).
- :mod:`~voxmem_analysis.stats.intervals` -- Wilson score intervals (statsmodels).
- :mod:`~voxmem_analysis.stats.tests` -- exact McNemar (statsmodels), Cochran's Q (pingouin),
  Holm adjustment.
- :mod:`~voxmem_analysis.stats.correlation` -- Spearman correlation with CI (pingouin; D.5).
- :mod:`~voxmem_analysis.stats.agreement` -- Cohen's kappa with SE and CI (statsmodels).
- :mod:`~voxmem_analysis.stats.power` -- power of a paired comparison: the normal approximation
  (Connor 1987, statsmodels.stats.power) and the exact conditional McNemar test (``method=``).
- :mod:`~voxmem_analysis.stats.gee` -- logistic GEE with exchangeable working correlation and
  robust SE, vectorised over clusters (statsmodels' estimator; the context-length model).

The libraries (statsmodels, pingouin) are imported inside the functions that use them, so
``import voxmem_analysis.stats`` stays fast.

Invalid arguments raise :class:`StatsInputError` (a ``ValueError``).
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
    # bootstrap
    "paired_bootstrap", "paired_bootstrap_matrix", "paired_bootstrap_frame", "bootstrap_means",
    "iter_bootstrap_counts", "shared_bootstrap_counts", "BootstrapMeans", "Statistic", "STATISTICS", "difference", "ratio",
    "mean_difference", "mean_ratio", "mean_level", "INTERVALS", "BootstrapSettings", "PairedSettings",
    # intervals, tests, correlation, agreement
    "wilson_interval", "mcnemar_exact", "holm", "cochran_q", "spearman", "cohen_kappa",
    # power
    "paired_power", "minimum_detectable_difference", "items_needed", "power_summary", "POWER_METHODS",
    # errors; the deprecated ``ci=`` keyword of functions taking ``ci_level=``
    "StatsInputError", "ci_level_alias", "frame_columns",
]
