"""The prefit protocol: a budget-independent per-trial fit that a method reuses across budgets.

Some methods spend most of their time on a fit that does not depend on the budget -- the IRT of
P-IRT and GP-IRT (one fit serves both methods and every budget), Lasso's regularisation path (one
path yields the core set of every budget). A method declares it with ``needs_prefit = "<kind>"``;
the kind's :class:`Prefit` says how to make the fits of all trials, how to turn them into tables
and back, and which part of their time counts as the method's training time. The trial runner
(:func:`benchcast.trials.runner.run_prefit`, :func:`~benchcast.trials.runner.write_prefit`,
:func:`~benchcast.trials.runner.read_prefit`) and one generic workflow step store and pass them; a
method called without a prefit makes its own fit, so the library works the same outside the
workflow.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np
import pandas as pd


class Prefit:
    """How one kind of per-trial fit is made, stored and charged.

    ``fit_trials`` returns ``(fits, timing)``: ``fits[trial]`` is what the method's
    ``fit(..., prefit=)`` receives, ``timing`` a table with a ``trial`` column and the seconds
    spent (it varies run to run, so it is stored apart from the tables). ``to_tables`` /
    ``from_tables`` are exact inverses on ``fits``. A kind with ``splittable`` takes ``only``, a
    subset of the trials: the fits of the subsets of a partition of the trials, together, are the
    fits of all trials (so a long prefit can be split into jobs by trial ranges and merged).
    """

    kind: str = ""
    splittable: bool = False

    def fit_trials(
        self,
        scores: np.ndarray,
        by_trial: Mapping[int, tuple[np.ndarray, np.ndarray]],
        settings: Mapping[str, Any],
        budgets: list[int],
        base_seed: int,
        log: Callable[[str], None],
        only: Collection[int] | None = None,
    ) -> tuple[dict[int, Any], pd.DataFrame]:
        raise NotImplementedError

    def to_tables(self, fits: Mapping[int, Any]) -> dict[str, pd.DataFrame]:
        raise NotImplementedError

    def from_tables(self, tables: Mapping[str, pd.DataFrame]) -> dict[int, Any]:
        raise NotImplementedError

    def training_seconds(self, timing: pd.DataFrame, method: str, budget: int) -> pd.Series:
        """Seconds of the prefit that count as ``method``'s training time at ``budget`` (per trial)."""
        return timing.set_index("trial")["fit_seconds"]


PREFITS: dict[str, Prefit] = {}


def register_prefit(cls: type[Prefit]) -> type[Prefit]:
    PREFITS[cls.kind] = cls()
    return cls


def get_prefit(kind: str) -> Prefit:
    return PREFITS[kind]
