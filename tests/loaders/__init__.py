"""Tests of bench/loaders/ (datasets, Hub, resolution, samples, errata)."""
