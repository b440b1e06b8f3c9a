"""Bus-level simulator of the SCAMP-5 pixel array: register planes, macro -> bus expansion,
analogue noise, per-macro states, checks against the ideal convolution (no Qt here)."""
