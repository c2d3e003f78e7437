"""Scale-out: units of work, `workers=N` processes, `shard=i/n`, Ray (docs/cluster.md)."""
