"""Analyses: a loaded release (or a label-free verdict frame) in, pandas DataFrames out; no plotting here.

``selection`` and ``accuracy`` are the base; the paper's tables live in ``results``, ``scaling``, ``judges``,
``ablation``, ``attribution``, ``design`` and ``amc``; ``verdicts`` holds the label-free engines; ``findings``
turns tables into sentences."""
