"""The run stage: config boundary, run directory, checkpoints, the per-question pipeline.

`python -m bench.run` is the CLI (`__main__.py`); `pipeline.py` is the story of one run,
`directory.py` the run folder, `conversation.py` one conversation through every arm
(answering and judging one question: `bench.answer.answer_step`).
"""
