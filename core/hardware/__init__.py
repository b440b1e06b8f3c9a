"""Targets as hardware: what each target kind describes (clock, bandwidth, memories, energies) and
how this machine is read from the system."""
