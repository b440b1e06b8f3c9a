"""The "simulate" engine: SCAMP-5 programs on the bus-level pixel-array simulator (sims/scamp5)."""
