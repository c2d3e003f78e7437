"""Remote run directories: `out=s3://bucket/prefix`, staged locally (docs/cluster.md)."""
