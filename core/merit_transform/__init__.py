"""MERIT's transform model (paper Sec. III): the tensor transform, its combine/reduce strategies,
the built-in transforms of common workloads and the transform file format. Workloads, the MERIT
engine (core.merit) and the MERIT-z simulator (sims.meritz) all build on it; it imports none of them."""
