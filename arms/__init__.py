"""The memory systems under test. Each arm is one module; `bench.arm.registry` names them."""
