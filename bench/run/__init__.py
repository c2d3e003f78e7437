"""The run stage: config boundary, run directory, checkpoints, the per-question pipeline.

`python -m bench.run` is the CLI (`__main__.py`); `pipeline.py` is the story of one run,
`directory.py` the run folder, `answer_step.py` answering and judging one question.
"""
