"""SCAMP-5 macro-level model: instruction table (isa), programs (program), exact interpreter (interp).

Shared by the Cain code search (core/cain) and the bus-level pixel-array simulator (sims/).
"""
