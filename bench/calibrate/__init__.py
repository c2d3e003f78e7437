"""`python -m bench.calibrate`: how often each judge accepts answers whose truth is known.

See `bench.calibrate.cli` (the command), `sets` (the derived answer sets), `evermemos`
(answer files in the EverMemOS shape) and `measure` (the counts), and
docs/calibration.md.
"""
