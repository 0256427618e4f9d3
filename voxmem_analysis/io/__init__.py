"""Reading inputs: harness prediction files, LongMemEval verdicts, the frame schema, scoring rules.

Nothing here knows about tables or figures.  ``release.load_release`` is the entry point.
"""
