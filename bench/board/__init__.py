"""`python -m bench.board RUN_DIR... [--out DIR]`: a leaderboard of runs on one dataset."""
