"""The target_cost engine: one network's cost on one target, a part of a comparison (core.comparison)."""
