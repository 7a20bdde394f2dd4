"""The one response simulator of the tests: binary answers of a (multidimensional) 2PL IRT model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SimulatedResponses:
    scores: np.ndarray  # (n_models, n_items) 0/1
    ability: np.ndarray  # (n_models, dims)
    disc: np.ndarray  # (n_items, dims); all ones for a Rasch model
    diff: np.ndarray  # (n_items,)
    logits: np.ndarray  # (n_models, n_items)


def irt_responses(
    n_models: int,
    n_items: int,
    *,
    seed: int | None = None,
    rng: np.random.Generator | None = None,
    dims: int = 1,
    ability_sd: float = 1.0,
    disc: tuple | None = None,
    diff_mean: float = 0.0,
    diff_sd: float = 1.0,
    diff_scale: float | None = None,
) -> SimulatedResponses:
    """Answers with P(correct) = sigmoid(ability @ disc.T - diff_scale * diff).

    ``disc = (mean, sd)`` draws normal discriminations (``mean`` may be one value per dimension);
    ``None`` is the Rasch model (all ones). ``diff_scale`` defaults to ``dims`` (the
    parameterisation of :mod:`benchcast.irt`). Draw order, from ``rng`` or ``default_rng(seed)``:
    abilities, discriminations (not for Rasch), difficulties, then one uniform per cell.
    """
    if rng is None:
        rng = np.random.default_rng(seed)
    ability = rng.normal(scale=ability_sd, size=(n_models, dims))
    a = np.ones((n_items, dims)) if disc is None else rng.normal(disc[0], disc[1], size=(n_items, dims))
    diff = rng.normal(diff_mean, diff_sd, size=n_items)
    logits = ability @ a.T - (dims if diff_scale is None else diff_scale) * diff
    p = 1.0 / (1.0 + np.exp(-logits))
    scores = (rng.random((n_models, n_items)) < p).astype(np.float64)
    return SimulatedResponses(scores, ability, a, diff, logits)


def logistic_scores(n_models, n_items, seed, spread=1.5):
    """Binary scores from a 1-D Rasch model, abilities and difficulties with sd ``spread``."""
    return irt_responses(n_models, n_items, seed=seed, ability_sd=spread, diff_sd=spread).scores
