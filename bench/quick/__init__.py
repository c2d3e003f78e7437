"""`armbench run` / `python -m bench.quick`: flags (or a .env file) turned into Hydra overrides."""
