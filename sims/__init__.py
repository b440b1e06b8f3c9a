"""Simulators that check the engines' results. Nothing here imports Qt."""
