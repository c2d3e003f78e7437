"""Published per-question results: import them as armbench runs, merge, export.

`python -m bench.published FILE --format evermemos|longmemeval --out RUN_DIR --arm NAME`
turns a published results file into a run directory with one record per question,
marked imported (`bench.records.Imported`), so the summariser can pair any arm with a
published system question by question. `merge` puts an imported arm beside a run's own
arms; `export` writes a run's answers in the published shapes. See docs/published.md.
"""
