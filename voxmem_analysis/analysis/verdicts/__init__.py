"""Analyses that assume no benchmark's labels: slicing, paired system comparison, scaling, judges.

Every function takes a long frame (polars or pandas, one row per verdict) and the *names*
of its columns, and returns a tidy pandas DataFrame.  The VoxMem verdict frame
(``Release.frame``: ``model, budget, evidence_type, operation, subtype, correct, scored``,
...) and the LongMemEval frame (:mod:`voxmem_analysis.io.longmemeval`: ``system, budget,
judge, question_type, correct, scored``, ...) go through the same code.

Conventions
-----------
* **Accuracy** of a set of rows is ``100 * sum(value) / n`` over the rows whose ``scored``
  column is true (``scored=None``: every row).  A null ``value`` on a scored row counts as 0
  (incorrect); the counts come from :func:`voxmem_analysis.analysis.accuracy.accuracy_by_code`,
  the group-by behind every accuracy of the package.  Accuracies, differences and changes are in
  percent / percentage points; retention is a ratio.  Column names follow one vocabulary:
  ``n``, ``n_correct``, ``<stat>_ci_low`` / ``<stat>_ci_high``, ``ci_level`` (the level),
  ``interval`` (the method), ``change`` = comparison − baseline, ``baseline_budget``.
* **Items** (``item=``) are the resampling unit of every bootstrap (a cluster bootstrap:
  all rows of a drawn item come along) and the pairing unit of paired comparisons.
* **Type column**: the column whose levels are "types" (``question_type``,
  ``evidence_type``, ``operation``, ``subtype``, ``source_operation``; see
  :data:`TYPE_COLUMNS`).  Rows pooled over it are labelled ``overall``, unweighted means
  over it ``macro`` (the LongMemEval "task-averaged accuracy").
* Randomness only through ``seed`` (``numpy.random.default_rng`` inside
  :mod:`voxmem_analysis.stats`); every slice / pair / group is resampled afresh with the
  same seed, so any one row can be reproduced from its own data.
* Nothing assumes the sign of a change: accuracy may rise or fall with budget, retention
  may exceed 1.
* Bootstrap settings (``n_boot``, ``seed``, ``ci_level``, endpoints, ``mc_se``, ``progress``) are one
  :class:`~voxmem_analysis.stats.BootstrapSettings` passed as ``settings=``.

Modules: :mod:`.slices` (:func:`slice_accuracy`), :mod:`.compare` (:func:`compare_systems`),
:mod:`.scaling` (:func:`scaling_table`, :func:`scaling_correlations`), :mod:`.judges`
(:func:`judge_agreement`, :func:`judge_agreement_pairs`); the frame helpers they share are in ``_frames``.
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
