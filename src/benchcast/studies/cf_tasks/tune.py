"""The collaborative-filtering method's hyper-parameters, chosen by an inner validation on the
*initial* models only (the paper gives no values; its Appendix H.3 / Figure 9 sweeps them one at a
time around a working point).

Per split and repeat, the initial models are split again the same way (``date``: the oldest three
quarters of them by release key are the inner initial models, the newest quarter the inner new ones;
``random``: a random 3:1 split, seed stream ``cf_tasks:tune:split:<matrix>``), the method runs on
the inner new models with the budgets of the tuning ratio, and the grid is searched by one pass of
coordinate descent in the order of Figure 9 (``|S|``, rounds, ``alpha``, ``q``, ``tau2``, ``tau1``,
``tau0``): each parameter in turn takes the grid value with the lowest inner task-level MAE, the
others held at their current values; a tie goes to the earlier grid value. The rows of the search
are Figure 9's sweeps. The new models' answers are never read.

Stage 1 depends only on ``n_similar``, ``rounds`` and ``alpha``, the oversampling also on ``tau0``
and the task-similarity settings: their results are cached across the grid, so a sweep over
``q``, ``tau1`` or ``tau2`` costs only Stage 2's predictions, and a ``tau0`` value that picks the
same similar tasks as an earlier one reuses its transports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.data.task_matrix import TaskMatrix
from benchcast.methods.collaborative_filtering import CFSettings, CollaborativeFiltering
from benchcast.stats.ranking import task_metrics
from benchcast.trials.tasks import ReleaseSplit, TaskOracle, random_split, release_split

ORDER = ("n_similar", "rounds", "alpha", "q", "tau2", "tau1", "tau0")  # Figure 9, top to bottom
_STAGE1 = ("n_similar", "rounds", "alpha")
_OVERSAMPLING = ("tau0", "centre_tasks", "oversample", "binary")


def inner_split(
    matrix: TaskMatrix, outer: ReleaseSplit, initial_share: float, rng: np.random.Generator
) -> ReleaseSplit:
    """The outer split's initial models split again the same way (rows of ``matrix``)."""
    rows = outer.initial
    if outer.kind == "date":
        inner = release_split(matrix.release[rows], initial_share)
    else:
        inner = random_split(len(rows), rng, initial_share)
    return ReleaseSplit(rows[inner.initial], rows[inner.new], outer.kind)


class _InnerRun:
    """CF on one inner split, with Stage 1 and the oversampling cached by the settings they read."""

    def __init__(self, matrix: TaskMatrix, inner: ReleaseSplit, budgets: np.ndarray, tie_seed: tuple[int, int]):
        self.initial = matrix.scores[inner.initial]
        self.targets = matrix.scores[inner.new]
        self.tasks, self.budgets, self.tie_seed = matrix.tasks, budgets, tie_seed
        self.truth = matrix.task_accuracy(inner.new)
        self.initial_accuracy = matrix.task_accuracy(inner.initial)
        self._picks: dict = {}
        self._augmented: dict = {}
        self._transports: dict = {}

    def score(self, settings: CFSettings) -> dict[str, float]:
        ties = seeding.rng(self.tie_seed[0], self.tie_seed[1], "cf_tasks:tune:ties")
        model = CollaborativeFiltering(settings).fit(self.initial, self.tasks, self.budgets, ties)
        key1 = tuple(getattr(settings, f) for f in _STAGE1)
        if key1 not in self._picks:
            self._picks[key1] = model.select(TaskOracle(self.targets, self.tasks, self.budgets))
        picks = self._picks[key1]
        key2 = key1 + tuple(getattr(settings, f) for f in _OVERSAMPLING)
        if key2 not in self._augmented:
            self._augmented[key2] = model.augment(picks, self._transports.setdefault(key1, {}))
        estimate = model.predict(picks, self._augmented[key2])
        return task_metrics(estimate, self.truth, self.initial_accuracy)

    def keep_only(self, settings: CFSettings) -> None:
        """Drop what only other Stage-1 settings use (the oversampled columns are large)."""
        key1 = tuple(getattr(settings, f) for f in _STAGE1)
        self._picks = {k: v for k, v in self._picks.items() if k == key1}
        self._augmented = {k: v for k, v in self._augmented.items() if k[: len(key1)] == key1}
        self._transports = {k: v for k, v in self._transports.items() if k == key1}


def tune(
    matrix: TaskMatrix,
    outer: ReleaseSplit,
    budgets: np.ndarray,
    start: CFSettings,
    grid: Mapping[str, Sequence],
    base_seed: int,
    repeat: int,
    initial_share: float = 0.75,
) -> tuple[CFSettings, pd.DataFrame]:
    """The chosen settings for one outer split and the search's rows ``step, param, value, mae,
    weighted_mae, chosen`` (reads only the rows ``outer.initial`` of ``matrix``)."""
    unknown = sorted(set(grid) - set(ORDER))
    if unknown:
        raise ValueError(f"cannot tune {unknown}: the grid may set {', '.join(ORDER)}")
    rng = seeding.rng(base_seed, repeat, f"cf_tasks:tune:split:{matrix.name}")
    run = _InnerRun(matrix, inner_split(matrix, outer, initial_share, rng), budgets, (base_seed, repeat))
    current, rows = start, []
    for step, param in enumerate(p for p in ORDER if p in grid):
        values = list(grid[param])
        scores = [run.score(replace(current, **{param: value})) for value in values]
        best = int(np.argmin([sc["mae"] for sc in scores]))  # the first of equal MAEs
        current = replace(current, **{param: values[best]})
        run.keep_only(current)
        rows += [
            {
                "step": step,
                "param": param,
                "value": float(value),
                "mae": sc["mae"],
                "weighted_mae": sc["weighted_mae"],
                "chosen": i == best,
            }
            for i, (value, sc) in enumerate(zip(values, scores, strict=True))
        ]
    return current, pd.DataFrame(rows)


def chosen_settings(sweep: pd.DataFrame, start: CFSettings) -> CFSettings:
    """The settings a search's rows chose (``start`` where the grid did not set a field)."""
    picked = sweep[sweep["chosen"]]
    fields = asdict(start)
    values = {p: type(fields[p])(v) for p, v in zip(picked["param"], picked["value"], strict=True)}
    return replace(start, **values)


def repeat_settings(sweeps: Sequence[pd.DataFrame], repeats: int, overrides: Mapping) -> list[dict]:
    """Each repeat's CF settings: its own search's choice (the one search of a ``date`` split
    serves every repeat), then ``overrides`` (a method's own params, e.g. ``oversample: false``)."""
    if len(sweeps) not in (1, repeats):
        raise ValueError(f"{len(sweeps)} tuning searches for {repeats} repeats")
    chosen = [asdict(chosen_settings(s, CFSettings())) for s in sweeps]
    return [{**chosen[r if len(chosen) > 1 else 0], **overrides} for r in range(repeats)]
