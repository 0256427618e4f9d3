"""Analyses: a loaded release (or a label-free verdict frame) in, pandas DataFrames out.

The one accuracy group-by (``accuracy``) and the choice of predictions it runs on (``selection``);
VoxMem tables (``results``, ``scaling``, ``judges``, ``ablation``, ``attribution`` with its rule
engine ``attribution_rules``, ``design``), the subtype explorer (``explore``) and label-free verdict
analyses (``verdicts``) shared with LongMemEval-format data; ``findings`` turns their tables into the
sentences notebooks and the report state (computed from this release, next to the paper's own
finding).  No plotting here.
"""
