"""Synthetic leaderboards shaped like real ones, at any size (the scaling benchmark's data).

Real item-level leaderboards (the Open LLM Leaderboard, HELM, the papers' matrices) share a few
traits that decide how a method's cost and behaviour grow, and the generator reproduces each:

* **a multidimensional 2PL model** (the data model of tinyBenchmarks, eq. 2.1, and of
  :mod:`benchcast.irt`): ``P(correct) = sigmoid(theta_l . alpha_i - beta_i)``, with a strong
  general ability (a leaderboard's first principal component carries most of its variance) and a
  few specific ones;
* **subtasks of uneven size** (MMLU's 57 subjects run from 100 to 1,534 questions): sizes drawn
  log-normally, each subtask leaning on its own specific dimension and shifted in difficulty;
* **near-constant items**: a share that almost every model gets right, or wrong;
* **near-duplicate models** (fine-tunes and merges of one base): a share of models whose
  abilities are another model's plus a little noise and whose answers are that model's, a share
  of them redrawn (two independent draws of one ability agree on only about 70% of items; real
  fine-tunes of one base make the same mistakes).

Every random draw comes from a named :mod:`benchcast.seeding` stream of ``seed``, and responses
are drawn in blocks of rows of a fixed size, so a matrix is a pure function of its arguments; it
is held as ``uint8`` (one byte a cell: 5,000 x 50,000 is 250 MB).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchcast import seeding


@dataclass(frozen=True)
class Shape:
    """The generator's knobs; the defaults are the benchmark's (documented in docs/performance.md)."""

    dims: int = 3  # specific abilities beside the general one
    general_sd: float = 1.0
    specific_sd: float = 0.5
    items_per_subtask: int = 250  # the mean size; the number of subtasks is items / this (2 to 60)
    subtask_size_sigma: float = 0.8  # log-normal spread of subtask sizes
    constant_share: float = 0.08  # items that (almost) every model gets right or wrong
    duplicate_share: float = 0.15  # models that are another model plus noise
    duplicate_noise: float = 0.05
    duplicate_redraw: float = 0.3  # a copy's answers are its model's, each redrawn with this chance
    block_cells: int = 2**24  # cells drawn at a time (fixed, so results do not depend on memory)


@dataclass(frozen=True)
class Synthetic:
    scores: np.ndarray  # (models, items) uint8 0/1
    subtasks: np.ndarray  # (items,) int64 subtask index
    ability: np.ndarray  # (models, 1 + dims)
    disc: np.ndarray  # (items, 1 + dims)
    diff: np.ndarray  # (items,)


def _subtask_sizes(n_items: int, shape: Shape, rng: np.random.Generator) -> np.ndarray:
    count = int(np.clip(round(n_items / shape.items_per_subtask), 2, 60))
    count = min(count, n_items)
    weights = rng.lognormal(0.0, shape.subtask_size_sigma, size=count)
    sizes = np.maximum(1, np.floor(weights / weights.sum() * n_items).astype(np.int64))
    sizes[np.argmax(sizes)] += n_items - sizes.sum()  # the rounding remainder to the largest
    return sizes


def leaderboard(n_models: int, n_items: int, seed: int = 0, shape: Shape = Shape()) -> Synthetic:
    """A ``n_models`` x ``n_items`` 0/1 response matrix with the traits of a real leaderboard."""
    if n_models < 2 or n_items < 2:
        raise ValueError(f"a leaderboard needs at least 2 models and 2 items, got {n_models} x {n_items}")
    dims = 1 + shape.dims

    rng = seeding.rng(seed, 0, "synthetic:models")
    ability = np.empty((n_models, dims))
    ability[:, 0] = rng.normal(0.0, shape.general_sd, size=n_models)
    ability[:, 1:] = rng.normal(0.0, shape.specific_sd, size=(n_models, shape.dims))
    duplicates = rng.random(n_models) < shape.duplicate_share
    duplicates[0] = False
    base_of = np.arange(n_models)
    for row in np.flatnonzero(duplicates):  # a copy of an earlier model that is not itself a copy
        originals = np.flatnonzero(~duplicates[:row])
        base_of[row] = originals[rng.integers(0, len(originals))]
        ability[row] = ability[base_of[row]] + rng.normal(0.0, shape.duplicate_noise, size=dims)

    rng = seeding.rng(seed, 0, "synthetic:items")
    sizes = _subtask_sizes(n_items, shape, rng)
    subtasks = np.repeat(np.arange(len(sizes)), sizes)
    leaning = rng.integers(0, shape.dims, size=len(sizes))  # each subtask's specific dimension
    shift = rng.normal(0.0, 0.7, size=len(sizes))
    disc = np.zeros((n_items, dims))
    disc[:, 0] = rng.lognormal(0.0, 0.4, size=n_items)
    disc[np.arange(n_items), 1 + leaning[subtasks]] = rng.lognormal(-0.3, 0.5, size=n_items)
    diff = rng.normal(0.0, 1.2, size=n_items) + shift[subtasks]
    constant = rng.random(n_items) < shape.constant_share
    diff[constant] = np.where(rng.random(constant.sum()) < 0.5, -8.0, 8.0)

    rng = seeding.rng(seed, 0, "synthetic:responses")
    keep_rng = seeding.rng(seed, 0, "synthetic:copies")  # its own stream: blocks do not interleave draws
    scores = np.empty((n_models, n_items), dtype=np.uint8)
    rows = max(1, shape.block_cells // n_items)
    for start in range(0, n_models, rows):
        stop = min(n_models, start + rows)
        logits = ability[start:stop] @ disc.T - diff
        with np.errstate(over="ignore"):
            scores[start:stop] = rng.random(logits.shape) * (1.0 + np.exp(-logits)) < 1.0
        keep = keep_rng.random(logits.shape) >= shape.duplicate_redraw
        for row in np.flatnonzero(duplicates[start:stop]) + start:  # its base is an earlier, final row
            np.copyto(scores[row], scores[base_of[row]], where=keep[row - start])
    return Synthetic(scores, subtasks, ability, disc, diff)
