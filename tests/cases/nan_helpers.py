"""A helper in its own file, for tests/test_debug_nans.py: an error must name this file."""

import numpy as np


def root_scaled(a):
    return np.sqrt(a) * 2.0  # birth: root_scaled
