"""The judge stage: the LLM judges that decide `correct`, and the official ones.

`protocol` is the seam (`Judge`, its `JudgeSpec`; `JudgeIdentity` for what resume
compares); `judges` is armbench's own judge (a versioned prompt, one chat call, a
strictly parsed JSON verdict; `judge_prompt` reads the prompt file); `official/` asks the
field's judges from their pinned upstream files; `judge_set` turns `cfg.judges` into every
judge's runs; `batch` asks one judge's runs over many answers (the calibration). The
arithmetic over verdicts (run ids, majority) is deterministic and lives in
`bench.scoring.judge_runs`, where the summariser (standard library only) and the errata
read it.
"""
