"""LongMemEval verdicts (``evaluate_qa.py`` output) read through a manifest: the verdict declaration
(:mod:`.verdicts`), the question file (:mod:`.questions`) and the loader (:mod:`.data`)."""
from voxmem_analysis.io.longmemeval.data import (FRAME_COLUMNS, MANIFEST_COLUMNS, QUESTION_TYPES, LongMemEvalData,
                                                 budget_sort_key, load_longmemeval, read_manifest,
                                                 read_questions, select_judge)

__all__ = ["FRAME_COLUMNS", "MANIFEST_COLUMNS", "QUESTION_TYPES", "LongMemEvalData", "budget_sort_key",
           "load_longmemeval", "read_manifest", "read_questions", "select_judge"]
