"""Analyses: a loaded release (or a label-free verdict frame) in, pandas DataFrames out.

VoxMem tables (``results``, ``scaling``, ``judges``, ``ablation``, ``attribution``, ``design``),
the subtype explorer (``explore``) and label-free verdict analyses (``verdicts``) shared with
LongMemEval-format data.  No plotting here.
"""
