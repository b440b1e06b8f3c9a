"""Engine "cost": one network costed on one target by the engine that costs that target's kind."""
