"""The memory systems under test. Each arm is one module; `bench.registry` names them."""
