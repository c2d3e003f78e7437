"""Recall suites: a versioned format, adapters, ranked-retrieval metrics and reports.

`python -m bench.suite` runs arms over a suite (docs/suites.md). Nothing here imports
an arm at module level; arms are built through bench.arm.registry.
"""
