"""Engines and domain model of Dataflow Explorer. Nothing here imports Qt."""

__version__ = "0.1.0"
