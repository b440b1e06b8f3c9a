"""The per-op noise draws: standard normal, independent between fields."""

import numpy as np

from sims.scamp5.noise import gaussian_fields


def test_gaussian_fields_are_standard_normal_and_independent():
    f = gaussian_fields(np.random.default_rng(3), 3, (129, 127))     # an odd count of values
    assert f.shape == (3, 129, 127) and f.dtype == np.float32
    x = f.astype(np.float64).ravel()
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02
    assert abs(np.mean(x ** 4) - 3) < 0.15                       # Gaussian tails, not uniform-ish
    assert abs(np.corrcoef(f[0].ravel(), f[1].ravel())[0, 1]) < 0.02
    assert abs(np.corrcoef(f[0].ravel(), f[2].ravel())[0, 1]) < 0.02
