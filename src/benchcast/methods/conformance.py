"""The method contract's invariants, checked on a method (``benchcast check-method NAME``): what a
researcher runs on their own method before it meets the papers' protocols.

Each check runs on its own so that one fault does not hide another: a small leaderboard of 0/1
scores drawn from a Rasch model (``seed``), source models and target models apart, two subtasks.

* ``settings``: ``params()`` builds the same method again (``make_method(name, m.params())``);
* ``budget``: the targets' scores are reached through the oracle and within the budget (an
  :class:`~benchcast.oracle.Oracle` that refuses more);
* ``seed``: the same seeds give the same fit and the same estimates, bit for bit, also after the
  global NumPy and ``random`` generators moved (an unseeded draw shows);
* ``stored fit``: the fitted state is written and read back in the stored-fit format (no pickle) and
  the read-back fit estimates the same;
* ``estimates``: one finite estimate per target, within [0, 1] (scores are 0/1);
* ``item groups``: a method that takes the items' subtasks (``uses_item_groups``) accepts ``groups=``;
* ``partial credit``: a method that declares scores in [0, 1] (``scores = UNIT``) fitted and estimating
  on partial credit (each item the share of three Rasch draws: 0, 1/3, 2/3 or 1) gives finite
  estimates in [0, 1] that change when the targets' scores are rounded to 0/1 (an estimator that
  rounds them, or reads only the zeros and ones, does not) and are closer to the truth than the
  source models' mean is; one declaring 0/1 scores passes with the note that benchcast refuses
  partial credit for it.

Only the budget check holds the oracle to the budget: the others give the method every item, so that
each names its own fault. An adaptive method (``asks_in_rounds``) is checked the same way, its rounds
inside one ``estimate``.
"""

from __future__ import annotations

import random
import tempfile
import traceback
from dataclasses import dataclass

import numpy as np

from benchcast.errors import BenchcastError, BudgetExceeded
from benchcast.methods import make_method
from benchcast.methods.base import UNIT
from benchcast.oracle import Oracle


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {self.detail}"


def leaderboard(seed: int = 0, n_models: int = 60, n_items: int = 160) -> tuple[np.ndarray, np.ndarray]:
    """0/1 scores of a Rasch model (models x items) and each item's subtask (two halves)."""
    rng = np.random.default_rng(seed)
    ability, difficulty = rng.normal(size=n_models), rng.normal(size=n_items)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    return (rng.random(p.shape) < p).astype(np.float64), np.repeat([0, 1], n_items // 2)


def partial_credit(seed: int = 0, n_models: int = 60, n_items: int = 160) -> np.ndarray:
    """Scores in [0, 1]: each item the share of three draws of the Rasch model of :func:`leaderboard`."""
    rng = np.random.default_rng([seed, 3])
    ability, difficulty = rng.normal(size=n_models), rng.normal(size=n_items)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    return (rng.random((3, *p.shape)) < p).mean(axis=0)


def _why(exc: BaseException) -> str:
    """An exception in one line, with where in the method it was raised."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "benchcast/" not in f.filename.replace("\\", "/")]
    at = f" (at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}{at}"


def _fit(name, params, source, groups, budget, seed):
    m = make_method(name, params)
    kwargs = {"groups": groups} if m.uses_item_groups else {}
    m.fit(source, budget, np.random.default_rng([seed, 1]), **kwargs)
    return m


def _estimate(m, targets, budget, seed) -> np.ndarray:
    return np.asarray(m.estimate(Oracle(targets, budget), np.random.default_rng([seed, 2])), dtype=np.float64)


def check_method(name: str, params: dict | None = None, budget: int | None = None, seed: int = 0) -> list[Check]:
    """Every check of the module docstring on method ``name`` with ``params``."""
    scores, groups = leaderboard(seed)
    source, targets = scores[:45], scores[45:]
    m0 = make_method(name, params)  # an unknown name or bad settings: a ConfigError, not a check
    budget = int(budget or max(20, m0.min_budget()))
    n_items = scores.shape[1]
    checks = []

    def run(label: str, body) -> None:
        try:
            checks.append(Check(label, *body()))
        except Exception as exc:  # a fault of the method under test: reported, the other checks go on
            checks.append(Check(label, False, _why(exc)))

    def settings():
        again = make_method(name, m0.params())
        same = again.params() == m0.params()
        return (
            same,
            "params() builds the same method" if same else f"params() gives {again.params()!r}, not {m0.params()!r}",
        )

    def within_budget():
        m = _fit(name, params, source, groups, budget, seed)
        oracle = Oracle(targets, budget)
        try:
            m.estimate(oracle, np.random.default_rng([seed, 2]))
        except BudgetExceeded as exc:
            return False, f"estimate asks for more than the budget of {budget} items ({exc})"
        return True, f"estimate used at most {int(oracle.spent.max())} of {budget} items per target"

    def same_seed():
        open_budget = n_items  # here only the seeding is checked, not the budget
        first = _estimate(_fit(name, params, source, groups, budget, seed), targets, open_budget, seed)
        np.random.seed(12345)  # the global generators moved: a method that draws from them differs now
        random.seed(12345)
        np.random.random(7)
        second = _estimate(_fit(name, params, source, groups, budget, seed), targets, open_budget, seed)
        if not np.array_equal(first, second, equal_nan=True):
            worst = float(np.nanmax(np.abs(first - second))) if first.shape == second.shape else float("nan")
            return False, (
                f"the same seeds gave different estimates (up to {worst:.4g} apart): a random choice not drawn "
                "from the rng benchcast passes (np.random.*, random.*, an unseeded default_rng())"
            )
        return True, "the same seeds give the same estimates, bit for bit"

    def stored():
        from benchcast.methods.state import read_state, write_state

        m = _fit(name, params, source, groups, budget, seed)
        with tempfile.TemporaryDirectory() as folder:
            try:
                write_state(m, {"method": name}, folder)
            except BenchcastError as exc:
                return False, f"the fitted state cannot be stored without pickle: {exc.problem} at {exc.field}"
            restored, _ = read_state(folder)
        a, b = _estimate(m, targets, n_items, seed), _estimate(restored, targets, n_items, seed)
        if not np.array_equal(a, b, equal_nan=True):
            return False, "the fit read back from the stored-fit format estimates differently"
        return True, "the fit is stored and read back without pickle and estimates the same"

    def estimates():
        est = _estimate(
            _fit(name, params, source, groups, budget, seed), targets, n_items, seed
        )  # budget: its own check
        if est.shape != (len(targets),):
            return False, f"estimate returned shape {est.shape}, not one value per target ({len(targets)},)"
        if not np.isfinite(est).all():
            return False, f"{int((~np.isfinite(est)).sum())} of {len(est)} estimates are not finite"
        if est.min() < 0 or est.max() > 1:
            return False, f"estimates outside [0, 1] for 0/1 scores: {est.min():.4g} .. {est.max():.4g}"
        return True, f"{len(est)} finite estimates in [0, 1]"

    def item_groups():
        if not m0.uses_item_groups:
            return True, "does not take the items' subtasks (uses_item_groups is False)"
        _fit(name, params, source, groups, budget, seed)
        return True, "fit accepts groups= (each item's subtask)"

    def on_partial_credit():
        if m0.scores != UNIT:
            return True, "declares 0/1 scores (scores = '0/1'): benchcast refuses partial credit for it"
        graded = partial_credit(seed)
        g_source, g_targets = graded[:45], graded[45:]
        est = _estimate(_fit(name, params, g_source, groups, budget, seed), g_targets, n_items, seed)
        truth = g_targets.mean(axis=1)
        if est.shape != truth.shape or not np.isfinite(est).all() or est.min() < 0 or est.max() > 1:
            return False, "estimates on partial credit are not one finite value in [0, 1] per target"
        rounded = _estimate(_fit(name, params, g_source, groups, budget, seed), g_targets.round(), n_items, seed)
        if np.array_equal(est, rounded):
            return False, (
                "its estimates on partial credit are those of the same answers rounded to 0/1: it reads only "
                "the 0s and 1s (or rounds the scores); declare scores = '0/1' or use the scores as they are"
            )
        error, guess = float(np.abs(est - truth).mean()), float(np.abs(g_source.mean() - truth).mean())
        if error >= guess:
            return False, (
                f"on partial credit its estimates are off by {100 * error:.1f} points, no closer than the source "
                f"models' mean ({100 * guess:.1f}): does it round the scores or read only the 0s and 1s?"
            )
        return True, f"on partial credit off by {100 * error:.1f} points (the source models' mean: {100 * guess:.1f})"

    run("settings", settings)
    run("budget", within_budget)
    run("seed", same_seed)
    run("stored fit", stored)
    run("estimates", estimates)
    run("item groups", item_groups)
    run("partial credit", on_partial_credit)
    return checks
