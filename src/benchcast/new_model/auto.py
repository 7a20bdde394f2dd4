"""``--method auto``: the method with the lowest held-out error on the leaderboard at hand, at the
budget asked for.

Every stored fit already holds a cross-validation over the leaderboard's models: its calibration
table (:mod:`benchcast.new_model.fits`) has each model's estimate by the method fitted without the
model's fold, the model answering alone as a new model does. The choice compares the candidates'
mean absolute error over those rows (lowest wins; equal errors go to the earlier candidate), so it is
measured once, stored with the fits, and the same on every later call. Building the candidates' fits
is the cost of the first call (each is then a stored fit that ``select`` and ``estimate`` reuse).

How sure the choice is: every candidate's errors are over the same models, so each candidate's
excess over the chosen one is a paired mean with a standard error (the spread of the model-by-model
differences over the square root of their number). Candidates within one standard error of the
chosen are *tied* with it: the cross-validation cannot tell them apart on this leaderboard (the
one-standard-error idea, Hastie, Tibshirani & Friedman 2009, section 7.10). The choice stays the
lowest error; the command names the ties, so a user knows when another candidate would serve as
well. In the held-out test at two seeds (2026-12-07, docs/studies/heldout_intervals.md), HELM's GSM8K
(83 models) had up to 10 candidates tied with the choice in a fold, and the choice moved between 4-5
methods over the 5 folds; there ``auto`` was within 10% of the best method in hindsight in 1 of 4
cells, on the larger boards in 11 of 12. Choosing by the root-mean-square error, or by the
one-standard-error rule towards the simplest candidates, did no better on both seeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.errors import ConfigError
from benchcast.methods import REGISTRY, make_method
from benchcast.methods.base import UNIT
from benchcast.new_model.api import check_method, stored_fit
from benchcast.new_model.fits import DEFAULT_FOLDS
from benchcast.new_model.leaderboard import Leaderboard, load_leaderboard

AUTO = "auto"
_SIMPLEST = ("random_sampling", "aipw", "random_sampling_learn")
#: the default candidates: every built-in method, the simplest first (equal errors go to the earlier).
#: In the held-out test of ``auto`` (2026-12-07; docs/studies/heldout_intervals.md) the best method
#: moved between Lasso, Random-Search-Learn, Double-Optimize, PCA, Stratified sampling and others with
#: the dataset and the budget: five candidates came within 10% of the best method's error in 3 of 8
#: cells (1.03-1.25x), every method in 6 (0.97-1.16x). ``candidates`` narrows the list (a first call
#: builds every candidate's fit: 100-330 s on one core there).
CANDIDATES = (
    *_SIMPLEST,
    *sorted(n for n, cls in REGISTRY.items() if cls.__module__.startswith("benchcast.") and n not in _SIMPLEST),
)


@dataclass
class Choice:
    method: str
    #: method, mae, p90, models: the candidates' held-out errors, best first; excess, excess_se: each
    #: one's mean paired excess over the chosen's errors and its standard error; tied: excess <= excess_se
    table: pd.DataFrame

    @property
    def tied(self) -> list[str]:
        """The candidates the cross-validation cannot tell from the chosen one (module docstring)."""
        return list(self.table.method[1:][self.table.tied[1:]])

    def reason(self, budget: int) -> str:
        """The choice in words, with the runner-up's error and the candidates tied with it."""
        best = self.table.iloc[0]
        text = (
            f"--method auto: {self.method} has the lowest held-out error at n={budget} on this leaderboard "
            f"(mean |error| {100 * best.mae:.2f} points over its {int(best.models)} models, each estimated by "
            "the method fitted without its fold)"
        )
        if len(self.table) > 1:
            second = self.table.iloc[1]
            text += (
                f"; runner-up {second.method}: {100 * second.mae:.2f} points "
                f"(+{100 * second.excess:.2f} +- {100 * second.excess_se:.2f}, paired over the models)"
            )
            tied = self.tied
            text += (
                f"; {len(tied)} within one standard error of it, which this leaderboard cannot tell apart: "
                f"{', '.join(tied)}"
                if tied
                else "; no other candidate within one standard error of it"
            )
        return text + f" (candidates: {', '.join(self.table.method)})"


def cv_errors(calibration: pd.DataFrame) -> pd.Series:
    """A fit's absolute cross-validation errors by model, from its calibration rows
    (``model_id, estimate, truth``): what ``auto`` compares."""
    return (calibration["estimate"] - calibration["truth"]).abs().set_axis(calibration["model_id"])


def rank(errors: dict[str, pd.Series]) -> pd.DataFrame:
    """The candidates' table (:class:`Choice`), best first, from each candidate's absolute
    cross-validation errors by model (``errors``: name -> errors indexed by model, in candidate order;
    equal mean errors go to the earlier candidate)."""
    names = list(errors)
    mae = [float(errors[n].mean()) for n in names]
    order = sorted(range(len(names)), key=lambda i: (mae[i], i))
    chosen = errors[names[order[0]]]
    rows = []
    for i in order:
        e = errors[names[i]]
        excess = (e - chosen.reindex(e.index)).to_numpy(float)
        se = float(np.std(excess, ddof=1) / np.sqrt(len(excess))) if len(excess) > 1 else float("nan")
        rows.append((names[i], mae[i], float(e.quantile(0.9)), len(e), float(excess.mean()), se))
    table = pd.DataFrame(rows, columns=["method", "mae", "p90", "models", "excess", "excess_se"])
    table["tied"] = table.excess <= table.excess_se
    return table


def choose_method(
    dataset: str | Leaderboard,
    budget: int,
    candidates: Sequence[str] | None = None,
    data_dir: str | Path = "results",
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    log=print,
    cores: int = 1,
) -> Choice:
    """The candidate (default :data:`CANDIDATES`, each with its registry defaults) with the lowest
    mean absolute held-out error at ``budget`` on the leaderboard (module docstring); builds the
    candidates' fits that are not stored yet."""
    names = list(dict.fromkeys(candidates or CANDIDATES))
    if AUTO in names:
        raise ConfigError("--candidates lists methods of the registry, not auto; fix: name them, e.g. aipw")
    for name in names:
        check_method(name, None)
    board = dataset if isinstance(dataset, Leaderboard) else load_leaderboard(str(dataset), data_dir)
    if not candidates:  # the defaults that run here: scores the leaderboard holds, a budget they take
        names = [
            name
            for name in names
            if (board.binary or REGISTRY[name].scores == UNIT) and make_method(name).min_budget() <= budget
        ]
    errors = {}
    for name in names:
        board, fit = stored_fit(board, name, budget, None, data_dir, seed, folds, log, cores)
        errors[name] = cv_errors(fit.calibration)
    table = rank(errors)
    return Choice(str(table.method[0]), table)
