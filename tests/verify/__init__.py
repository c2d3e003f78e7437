"""Tests of bench/verify/ (manifests, signing, re-blessing)."""
