"""`python -m bench.cleanup RUN_DIR`: delete the namespaces a killed live run left in a service."""
