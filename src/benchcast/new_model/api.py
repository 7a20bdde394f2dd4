"""``select`` and ``estimate``: which items a new model should answer, then its full-benchmark
score with an interval and its rank among the leaderboard's models. The command line
(``benchcast select`` / ``benchcast estimate``) calls these.

A selection is a replay (:mod:`benchcast.new_model.replay`): the stored fit's ``estimate`` runs on
the answers so far and stops at the first item without one; the items of that request are the
next batch. Static methods ask for their whole core set at once; adaptive ones (TailoredBench:
the G-set, then the model's tailored N-set) ask in batches, so ``select`` is called again with
the answers so far until it reports that the selection is complete.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.data.answers import Answers
from benchcast.errors import ConfigError, DataError, did_you_mean
from benchcast.methods import make_method
from benchcast.methods.base import check_scores
from benchcast.new_model.facts import first_fit_seconds
from benchcast.new_model.fits import (
    DEFAULT_FOLDS,
    StoredFit,
    build_fit,
    build_lock,
    conformal_halfwidth,
    estimate_stream,
    fit_folder,
    load_fit,
    stored_budget,
)
from benchcast.new_model.leaderboard import Leaderboard, load_leaderboard
from benchcast.new_model.replay import replay
from benchcast.renames import renamed_names

#: how ``estimate`` makes the interval (:func:`estimate_from`)
INTERVALS = ("auto", "own", "conformal")


@dataclass
class Selection:
    items: pd.DataFrame  # item_id, subtask, selection_id: the next batch (empty when complete)
    selection_id: str
    complete: bool  # every item the method asks for is answered
    answered: int
    budget: int


def stored_fit(
    dataset: str | Leaderboard,
    method: str,
    budget: int,
    params: dict | None = None,
    data_dir: str | Path = "results",
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    log=print,
    cores: int = 1,
    need_pairs: bool = False,
) -> tuple[Leaderboard, StoredFit]:
    """The leaderboard and the stored fit of ``method`` at ``budget``, built (and stored) first if
    there is none for these settings (or, with ``need_pairs``, none with calibration pairs), its
    calibration folds on ``cores`` processes."""
    check_method(method, params)
    board = dataset if isinstance(dataset, Leaderboard) else load_leaderboard(str(dataset), data_dir)
    check_scores(method, board.binary, f"the leaderboard {board.key}")
    fit = load_fit(board, method, params, budget, seed, data_dir, folds, log, need_pairs)
    if fit is None:
        with build_lock(fit_folder(data_dir, board, method, budget), log):
            # built meanwhile?
            fit = load_fit(board, method, params, budget, seed, data_dir, folds, lambda _: None, need_pairs)
            if fit is None:
                t0 = time.perf_counter()
                log(build_plan(board, method, budget, folds, cores))
                fit = build_fit(board, method, params, budget, seed, folds, data_dir, log, cores)
                log(f"built in {time.perf_counter() - t0:.1f}s: {fit.folder}")
    board.remember()
    return board, fit


def build_plan(board: Leaderboard, method: str, budget: int, folds: int, cores: int) -> str:
    """What a first call builds and, where the held-out test measured it, about how long it takes."""
    folds = min(int(folds), len(board.matrix.model_ids))
    workers = max(1, min(int(cores), folds))
    text = (
        f"building the {method} fit at n={budget} on {board.key} (once; later calls read it): the fit on all "
        f"{len(board.matrix.model_ids)} models, then {folds} calibration folds on up to {workers} cores"
    )
    measured = first_fit_seconds(method, board.key, budget)
    if measured is not None:
        seconds, at = measured
        about = seconds * (1 + folds / workers) / (1 + folds)  # the fit, then the folds side by side
        text += f"; about {about:.0f}s (the held-out test's fit at n={at} took {seconds:.0f}s on one core)"
    return text


def check_method(method: str, params: dict | None) -> None:
    """An unknown method or bad settings stop before anything is built."""
    from benchcast.methods import FAILED, REGISTRY, load_plugins

    if method not in REGISTRY:
        load_plugins()
    if method in FAILED:  # a package's method that could not be registered: why, in one line
        make_method(method, params)
    if method not in REGISTRY:
        raise ConfigError(
            f"unknown method {method!r}{did_you_mean(method, REGISTRY) or '.'} The item-level methods are "
            f"{', '.join(sorted(REGISTRY))} (benchcast methods). Fix: pass one of them as --method"
        )
    make_method(method, params)


def _check_selection_id(answers: Answers, fit: StoredFit) -> None:
    wrong = sorted(answers.selection_ids - {fit.meta["selection_id"]})
    if wrong:
        raise DataError(
            answers.source,
            "selection_id",
            f"{wrong[0]} is not the id of this selection ({fit.meta['selection_id']}: {fit.meta['method']} at "
            f"n={fit.meta['budget']} on {fit.meta['dataset']}); the answers were selected with other settings or "
            "another matrix",
            "estimate with the dataset, --method, --budget and settings the items were selected with",
        )


def _replay(board: Leaderboard, fit: StoredFit, answers: Answers):
    seed, method = fit.meta["seed"], fit.meta["method"]
    n_items = len(board.matrix.item_ids)
    return replay(
        fit.method, n_items, fit.meta["budget"], answers.scores, lambda: seeding.rng(seed, 0, estimate_stream(method))
    )


def _check_selected(answers: Answers, selected: list[int], board: Leaderboard) -> None:
    """Every answer must be for an item the method asked for (so far)."""
    extra = sorted(set(answers.scores) - set(selected), key=lambda j: answers.where[j])
    if extra:
        j = extra[0]
        raise DataError(
            answers.source,
            answers.where[j],
            f"item {board.matrix.item_ids[j]!r} was not selected ({len(extra)} answered items were not)",
            answers.extra_fix(
                "answer only the items `benchcast select` wrote for this method and budget, in its batches"
            ),
        )


def select(
    dataset: str | Leaderboard,
    method: str,
    budget: int,
    answers=None,
    *,
    params: dict | None = None,
    data_dir: str | Path = "results",
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    log=print,
    cores: int = 1,
) -> Selection:
    """The next items ``method`` asks a new model for (all of a static method's core set); a fit
    built first calibrates on ``cores`` processes."""
    board, fit = stored_fit(dataset, method, budget, params, data_dir, seed, folds, log, cores)
    return next_items(board, fit, board.answers(answers if answers is not None else {}))


def check_count(given: Answers, budget: int) -> None:
    """More answers than the budget are refused here; harness logs are not, so that the selection
    check names the first document that was not selected (a task run in full, the usual cause)."""
    if len(given.scores) > budget and not given.harness:
        raise DataError(
            given.source,
            "(entries)",
            f"{len(given.scores)} answers for a budget of {budget}",
            given.extra_fix("give at most --budget answers"),
        )


def next_items(board: Leaderboard, fit: StoredFit, given: Answers) -> Selection:
    """:func:`select` on a loaded leaderboard and fit."""
    _check_selection_id(given, fit)
    check_count(given, fit.meta["budget"])
    _, selected, batch = _replay(board, fit, given)
    _check_selected(given, selected, board)
    complete = batch is None
    batch = np.asarray([] if batch is None else batch, dtype=np.int64)
    items = pd.DataFrame(
        {
            "item_id": [board.matrix.item_ids[j] for j in batch],
            "subtask": [board.matrix.subtasks[j] for j in batch],
            "selection_id": fit.meta["selection_id"],
        }
    )
    return Selection(items, fit.meta["selection_id"], complete, len(given.scores), int(fit.meta["budget"]))


def estimate(
    dataset: str | Leaderboard,
    method: str,
    answers,
    *,
    budget: int | None = None,
    level: float = 0.9,
    interval: str = "auto",
    params: dict | None = None,
    data_dir: str | Path = "results",
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    log=print,
    cores: int = 1,
) -> dict:
    """The full-benchmark score (0-1) of the model that gave ``answers``, with a ``level``
    interval and its rank among the leaderboard's models. ``budget`` defaults to the one the
    answers' ``selection_id`` was made with, else to the number of answers."""
    check_method(method, params)
    board = dataset if isinstance(dataset, Leaderboard) else load_leaderboard(str(dataset), data_dir)
    given = board.answers(answers)
    if not given.scores:
        raise DataError(given.source, "(entries)", "no answers", "answer the items `benchcast select` wrote")
    if budget is None:
        budget = budget_of_selection(board, method, given, data_dir)
    check_count(given, budget)
    board, fit = stored_fit(board, method, budget, params, data_dir, seed, folds, log, cores)
    return estimate_from(board, fit, given, level, interval)


def _per_subtask(board: Leaderboard, fit: StoredFit, selected: list[int]) -> dict:
    """The subtasks' own estimates, where the method gives them (the CF probe), with the items
    each used."""
    per_group = getattr(fit.method, "per_group_", None)
    if per_group is None:
        return {}
    codes, names = pd.factorize(pd.Series(board.matrix.subtasks))  # the codes fit_method passed as groups
    used = np.bincount(codes[selected], minlength=len(names))
    return {
        "subtasks": {
            str(n): {"estimate": float(per_group[0, k]), "items_used": int(used[k])} for k, n in enumerate(names)
        }
    }


def budget_of_selection(board: Leaderboard, method: str, given: Answers, data_dir) -> int:
    """The budget the answers were selected with: the stored fit's whose selection id they carry, or
    else the number of answers (a method may ask for an item twice, GP-IRT's anchors do, so a
    finished selection can answer fewer items than its budget)."""
    if len(given.selection_ids) == 1:
        budget = stored_budget(data_dir, board, method, next(iter(given.selection_ids)))
        if budget is not None:
            return budget
    return len(given.scores)


def estimate_from(
    board: Leaderboard, fit: StoredFit, given: Answers, level: float = 0.9, interval: str = "auto"
) -> dict:
    """:func:`estimate` on a loaded leaderboard and fit. ``interval``: ``own`` (the method's own
    central-limit interval: AIPW), ``conformal``, or ``auto`` (its own where it has one)."""
    if interval not in INTERVALS:
        raise ConfigError(f"unknown interval {interval!r}; fix: choose one of {', '.join(INTERVALS)}")
    _check_selection_id(given, fit)
    method, budget = fit.meta["method"], fit.meta["budget"]
    value, selected, batch = _replay(board, fit, given)
    _check_selected(given, selected, board)
    if batch is not None:
        missing = [board.matrix.item_ids[j] for j in batch]
        where = board.key if board.path.is_dir() else board.path
        answers = "--answers FILE..." if not given.harness else "--format lm-eval --answers <the harness logs so far>"
        fix = (
            f"run `benchcast select {where} --method {method} --budget {budget} {answers}` (every round's answers) "
            "for the items still to answer, or pass the --budget you selected with"
        )
        if given.harness:  # name the documents as the harness does
            from benchcast.data.harness_identity import harness_map

            items = harness_map(board).items
            missing = [f"{items[j][0]} doc {items[j][1]}" for j in batch]
        raise DataError(
            given.source,
            "(entries)",
            f"{method} at n={budget} still asks for {len(missing)} unanswered items, e.g. {missing[:3]}",
            fix,
        )
    half = conformal_halfwidth(fit.calibration, level)
    conformal = (max(0.0, value - half), min(1.0, value + half))
    where = (
        f"split-conformal from {len(fit.calibration)} held-out models of the leaderboard "
        f"({fit.meta['folds']} folds of models, each estimated by the method fitted without its fold)"
    )
    own = getattr(fit.method, "standard_error", None)  # a method's own interval, where it has one
    se = own() if own is not None else None
    if interval == "own" and se is None:
        raise ConfigError(f"{method} has no interval of its own; fix: use --interval conformal (or auto)")
    if interval != "conformal" and se is not None:
        z = NormalDist().inv_cdf(0.5 + level / 2)
        lower, upper = max(0.0, value - z * float(se[0])), min(1.0, value + z * float(se[0]))
        where = f"{method}'s own central-limit interval (standard error {float(se[0]):.4f})"
    else:
        lower, upper = conformal
    accuracy = board.matrix.accuracy()
    result = {
        "dataset": fit.meta["dataset"],
        "method": method,
        "params": fit.meta["params"],
        "budget": fit.meta["budget"],
        "selection_id": fit.meta["selection_id"],
        "items_used": len(selected),
        "estimate": value,
        "lower": lower,
        "upper": upper,
        "level": float(level),
        "interval": where,
        "conformal_lower": conformal[0],
        "conformal_upper": conformal[1],
        **_per_subtask(board, fit, selected),
        "rank": int(1 + (accuracy > value).sum()),
        "rank_best": int(1 + (accuracy > upper).sum()),
        "rank_worst": int(1 + (accuracy > lower).sum()),
        "models": int(len(accuracy)),
    }
    return result


__getattr__ = renamed_names(__name__)  # the names renamed in 0.3.0, for one release
