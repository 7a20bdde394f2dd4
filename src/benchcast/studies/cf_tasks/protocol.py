"""The collaborative-filtering study's protocol (Zhong, Yi & Ye, Section 5, Appendix F): per
matrix, split and budget ratio, every method estimates every new model on every task with the same
per-task budgets.

- **Splits**: ``date`` -- the oldest three quarters of the models with a release key are the initial
  models, the rest new (the paper's 3:1 split by release date; models without a key are left out);
  ``random`` -- a random 3:1 split of all models, redrawn per repeat (where dates are missing).
- **Budgets**: :func:`benchcast.trials.tasks.task_budgets` (``ratio * |T_i|``, at least 20 items, all of a
  smaller task).
- **Repeats**: the paper repeats stochastic methods 5 times; each repeat ``r`` seeds the method's
  streams ``cf_tasks:<method>:<r>:...`` (and the random split's).
- **Methods**: ``cf`` (:mod:`benchcast.methods.collaborative_filtering`) or any item-level method of the
  registry run per task (:func:`benchcast.trials.tasks.run_per_task`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.data.task_matrix import TaskMatrix
from benchcast.methods import get_prefit
from benchcast.methods.collaborative_filtering import CFSettings, cf_estimates
from benchcast.stats.ranking import task_metrics
from benchcast.trials.runner import PrefitResult
from benchcast.trials.tasks import ReleaseSplit, random_split, release_split, run_per_task, task_budgets

SPLITS = ("date", "random")


def make_split(matrix: TaskMatrix, kind: str, repeat: int, base_seed: int, initial_share: float) -> ReleaseSplit:
    """The ``date`` split (models with a release key) or a ``random`` split (redrawn per repeat)."""
    if kind == "date":
        dated = np.flatnonzero(np.isfinite(matrix.release))
        if len(dated) < 8:
            raise ValueError(
                f"matrix '{matrix.name}' has {len(dated)} models with a release key; fix: use split random"
            )
        inner = release_split(matrix.release[dated], initial_share)
        return ReleaseSplit(dated[inner.initial], dated[inner.new], "date")
    if kind == "random":
        rng = seeding.rng(base_seed, repeat, f"cf_tasks:split:{matrix.name}")
        return random_split(len(matrix.model_ids), rng, initial_share)
    raise ValueError(f"split must be one of {SPLITS}, got {kind!r}")


def estimate(
    method: str,
    params: Mapping,
    initial: np.ndarray,
    targets: np.ndarray,
    tasks: np.ndarray,
    budgets: np.ndarray,
    base_seed: int,
    repeat: int,
    prefits: dict | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(targets, tasks) estimates and items spent per target and task of one method (``prefits``:
    per task, the shared IRT fit of a method with ``needs_prefit``)."""
    if method == "cf":
        return cf_estimates(initial, targets, tasks, budgets, CFSettings(**params), base_seed, repeat)

    def rng_for(task: int, stage: str) -> np.random.Generator:
        return seeding.rng(base_seed, repeat, f"cf_tasks:{method}:{stage}:{task}")

    return run_per_task(method, dict(params), initial, targets, tasks, budgets, rng_for, prefits)


def prefit_trial(repeat: int, task: int) -> int:
    """The prefit's trial key of one repeat and task (its seed streams are keyed by it)."""
    return repeat * 1000 + task


def irt_prefit(
    matrix: TaskMatrix,
    split: str,
    repeats: int,
    base_seed: int,
    settings: Mapping,
    ratios: Sequence[float],
    initial_share: float = 0.75,
    floor: int = 20,
    log=lambda s: None,
) -> PrefitResult:
    """The IRT fit of P-IRT and GP-IRT (:class:`benchcast.methods.irt_methods.IRTPrefit`) for
    every repeat and task, with the k-means anchors of the task's budget at every ratio: one job
    per matrix and split instead of one fit per method, ratio, repeat and task. Under the
    ``date`` split every repeat has the same initial models and shares one fit per task."""
    if len(matrix.task_names) >= 1000:
        raise ValueError("prefit trial keys hold at most 999 tasks")
    splits = [make_split(matrix, split, r, base_seed, initial_share) for r in range(repeats)]
    sizes = matrix.task_sizes
    fits, timing = {}, []
    for t in range(len(sizes)):
        budgets = sorted({int(task_budgets(sizes, ratio, floor)[t]) for ratio in ratios} - {int(sizes[t])})
        if not budgets:
            continue
        by_trial = {prefit_trial(r, t): (sp.initial, sp.new) for r, sp in enumerate(splits)}
        f, seconds = get_prefit("irt").fit_trials(
            matrix.scores[:, matrix.tasks == t], by_trial, settings, budgets, base_seed, log
        )
        fits.update(f)
        timing.append(seconds)
    return PrefitResult("irt", fits, pd.concat(timing, ignore_index=True) if timing else pd.DataFrame())


def repeat_prefits(prefit: PrefitResult | None, repeats: int, n_tasks: int) -> list[dict | None]:
    """Per repeat, the prefit of each task that has one (``None`` without a prefit)."""
    if prefit is None:
        return [None] * repeats
    return [
        {t: prefit.fits[prefit_trial(r, t)] for t in range(n_tasks) if prefit_trial(r, t) in prefit.fits}
        for r in range(repeats)
    ]


def run_cell(
    matrix: TaskMatrix,
    split: str,
    method: str,
    params: Mapping,
    ratio: float,
    repeats: int,
    base_seed: int,
    initial_share: float = 0.75,
    floor: int = 20,
    top_k: int = 10,
    repeat_params: Sequence[Mapping] | None = None,
    prefit: PrefitResult | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One (matrix, split, method, ratio) job; ``method`` is ``cf`` or a registry method, ``params``
    its settings, or ``repeat_params[r]`` in repeat ``r`` (the tuned CF settings); ``prefit``:
    :func:`irt_prefit` for the methods with ``needs_prefit``. Returns per
    repeat, new model and task ``repeat, model_id, task, estimate, truth, budget, spent``, and per
    repeat the task-level metrics
    (:func:`benchcast.stats.ranking.task_metrics`, ranks among that repeat's initial models) with
    ``budget_items`` (the items every new model may spend, all tasks), ``initial``, ``new`` and
    ``seconds`` (fit and estimate for every new model)."""
    budgets = task_budgets(matrix.task_sizes, ratio, floor)
    rows, metrics = [], []
    prefits = repeat_prefits(prefit, repeats, len(matrix.task_names))
    for r in range(repeats):
        sp = make_split(matrix, split, r, base_seed, initial_share)
        initial, targets = matrix.scores[sp.initial], matrix.scores[sp.new]
        t0 = time.perf_counter()
        settings = params if repeat_params is None else repeat_params[r]
        est, spent = estimate(method, settings, initial, targets, matrix.tasks, budgets, base_seed, r, prefits[r])
        seconds = time.perf_counter() - t0
        truth = matrix.task_accuracy(sp.new)
        metrics.append(
            {
                "repeat": r,
                **task_metrics(est, truth, matrix.task_accuracy(sp.initial), top_k),
                "budget_items": int(budgets.sum()),
                "initial": len(sp.initial),
                "new": len(sp.new),
                "seconds": seconds,
            }
        )
        n_new, n_tasks = est.shape
        rows.append(
            pd.DataFrame(
                {
                    "repeat": np.int32(r),
                    "model_id": np.repeat([matrix.model_ids[i] for i in sp.new], n_tasks),
                    "task": np.tile(matrix.task_names, n_new),
                    "estimate": est.ravel(),
                    "truth": truth.ravel(),
                    "budget": np.tile(budgets, n_new).astype(np.int32),
                    "spent": spent.ravel().astype(np.int32),
                }
            )
        )
    return pd.concat(rows, ignore_index=True), pd.DataFrame(metrics)
