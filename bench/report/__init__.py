"""The report stage: the page, its errata section, chart PNGs, the explorer, the frame."""
