"""The answer stage: one arm's context to a scored, judged `ArmResult`.

`answer_step` asks the answerer with the shared prompt (`answer_prompt`), fits the
context to the server's window (`context_fit`), scores and judges the answer;
`repeat_plan` and `repeats` re-draw answers and verdicts for `repeats=N`. Used by the
run (`bench.run`), the suites and the screens alike.
"""
