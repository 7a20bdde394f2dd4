"""Small simulated score matrices shared by the method tests."""

import numpy as np


def logistic_scores(n_models, n_items, seed, spread=1.5):
    """Binary scores from a 1-D logistic (Rasch) model: ability - difficulty."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(scale=spread, size=n_models)
    difficulty = rng.normal(scale=spread, size=n_items)
    p = 1.0 / (1.0 + np.exp(-(ability[:, None] - difficulty[None, :])))
    return (rng.random((n_models, n_items)) < p).astype(np.float64)
