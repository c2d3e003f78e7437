"""The verify stage: a run checked against its manifest, signatures, the record schema."""
