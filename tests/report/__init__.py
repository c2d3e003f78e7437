"""Tests of bench/report/ (report.html, explorer, frame, notebook)."""
