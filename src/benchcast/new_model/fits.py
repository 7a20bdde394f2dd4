"""Stored fits: a method fitted on every model of a leaderboard, with the residuals that
calibrate its intervals, stored under ``<data_dir>/models/<dataset>/<method>/n=<budget>/``.

* ``fit.json`` + ``arrays.parquet`` (:mod:`benchcast.methods.state`): the fitted method, with its
  settings, seed, budget, the leaderboard's checksum and the selection id;
* ``calibration.parquet``: one row per model of the leaderboard (``model_id, fold, estimate,
  truth``): the model's estimate by the same method fitted without the model's fold, the model
  answering alone exactly as a new model does (:mod:`benchcast.new_model.replay`'s single target);
* ``pairs.parquet``: pairs of models of one fold (the same fit chose their items, as two new models
  answer one selection), each pair's estimated and true differences and how many of the items both
  answered they answered differently (:func:`fold_pairs`): what ``benchcast compare`` calibrates its
  paired intervals on (:mod:`benchcast.new_model.compare`).
  Split-conformal intervals (:func:`conformal_halfwidth`) come from these residuals, as the
  BenchPress reliability layer calibrates on held-out models. ``folds`` models-out folds stand in
  for leave-one-model-out (every model is held out once; ``folds`` = the number of models is
  leave-one-out exactly) so that an IRT method needs ``folds`` refits, not one per model.

Seeds follow the trial runner (:func:`benchcast.trials.runner.run_job`): the stored fit is trial 0 of
``seed``; calibration fold ``k`` is trial ``k + 1``. So the fit, and the estimate a new model
gets, are what the workflow's trial runner computes for the same sources, settings and seed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.blas import THREAD_VARIABLES, give_back_defaults, loaded_libraries, one_thread_environment
from benchcast.data.item_level import write_parquet_atomic
from benchcast.errors import ConfigError, DataError
from benchcast.methods import Method, make_method
from benchcast.methods.state import CorruptFit, OldFitFormat, read_state, write_state
from benchcast.new_model.interrupts import interrupts_held
from benchcast.new_model.leaderboard import Leaderboard
from benchcast.new_model.workers import Workers
from benchcast.oracle import Oracle
from benchcast.renames import renamed_names

DEFAULT_FOLDS = 10


@dataclass
class StoredFit:
    method: Method
    meta: dict
    calibration: pd.DataFrame  # model_id, fold, estimate, truth
    folder: Path
    seconds: dict | None = None  # fit and calibration seconds when just built (kept out of fit.json)
    pairs: pd.DataFrame | None = None  # fold_pairs' table; None for a fit stored before it existed


def fit_stream(method: Method) -> str:
    """The seed stream of ``method``'s fit, as the trial runner names it."""
    return "coreset" if method.uses_coreset_stream else (method.rng_stream or f"method:{method.name}")


def estimate_stream(name: str) -> str:
    return f"estimate:{name}"


def selection_id(board: Leaderboard, method: Method, budget: int, seed: int) -> str:
    """Names the selection: the leaderboard's checksum, the method and its settings, the budget
    and the seed. Answers carrying another id were selected for something else."""
    doc = {
        "matrix": board.checksum,
        "method": method.name,
        "params": method.params(),
        "budget": int(budget),
        "seed": int(seed),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:16]


def fit_folder(data_dir: str | Path, board: Leaderboard, method: str, budget: int) -> Path:
    return Path(data_dir) / "models" / board.key / method / f"n={int(budget)}"


def stored_fits(data_dir: str | Path, board: Leaderboard, method: str) -> list[Path]:
    """The ``fit.json`` of every stored fit of ``method`` on ``board`` (any budget)."""
    return sorted(fit_folder(data_dir, board, method, 0).parent.glob("n=*/fit.json"))


def stored_budget(data_dir: str | Path, board: Leaderboard, method: str, selection: str | None = None) -> int | None:
    """The budget of the stored fit of ``method`` on ``board`` whose selection id is ``selection``;
    without one, of the only stored fit (None if no such fit, or several)."""
    fits = stored_fits(data_dir, board, method)
    if selection is None:
        return int(json.loads(fits[0].read_text())["meta"]["budget"]) if len(fits) == 1 else None
    for path in fits:
        meta = json.loads(path.read_text())["meta"]
        if meta.get("selection_id") == selection:
            return int(meta["budget"])
    return None


def fit_method(
    method: str, params: dict | None, scores: np.ndarray, subtasks, budget: int, seed: int, trial: int
) -> Method:
    """``method`` fitted on ``scores`` (every row a source) with the trial runner's seed streams."""
    m = make_method(method, params)
    if budget < m.min_budget() or budget >= scores.shape[1]:
        raise ConfigError(
            f"budget {budget} does not fit {method}: it needs at least {m.min_budget()} items and fewer than "
            f"the leaderboard's {scores.shape[1]}; fix: choose --budget in that range"
        )
    kwargs = {}
    if m.uses_item_groups:
        kwargs["groups"] = pd.factorize(pd.Series(subtasks))[0].astype(np.int64)
    m.fit(scores, int(budget), seeding.rng(seed, trial, fit_stream(m)), **kwargs)
    return m


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


@contextmanager
def one_blas_thread():
    """One BLAS/OpenMP thread for the fits inside: the floating-point reductions -- hence the fit's
    bytes -- do not depend on the machine's cores, and small matrix products do not pay for threads
    (GP-IRT's first MuSR fit took 87 s with two BLAS threads, 30 s with one, on 2 cores).

    ``threadpool_limits`` reaches the libraries already loaded; one that loads inside (SciPy's own
    OpenBLAS, on the first ``scipy.linalg`` import) reads the thread variables, set here for the
    duration (importing SciPy up front instead would cost every call ~0.5 s). At the end the
    libraries loaded before get their thread counts back and those loaded inside the count they
    would have read outside (:func:`benchcast.blas.give_back_defaults`): the caller's program keeps
    its threads."""
    from threadpoolctl import threadpool_limits

    saved = {var: os.environ.get(var) for var in THREAD_VARIABLES}
    os.environ.update(one_thread_environment())
    try:
        with interrupts_held():  # threadpoolctl scans the libraries through a ctypes callback,
            loaded = loaded_libraries()  # which would swallow a Ctrl-C raised inside it
            limits = threadpool_limits(1)
        try:
            yield
        finally:
            with interrupts_held():
                limits.restore_original_limits()
                give_back_defaults(loaded, saved)
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


def fold_of_models(n_models: int, folds: int, seed: int) -> np.ndarray:
    """Each model's calibration fold (0 .. folds - 1), from the ``deploy:folds`` stream."""
    fold_of = np.empty(n_models, dtype=np.int64)
    # the stream's label is its first name: labels feed the generators, so renaming one changes the bytes
    fold_of[seeding.rng(seed, 0, "deploy:folds").permutation(n_models)] = np.arange(n_models) % folds
    return fold_of


#: calibrating takes processes only when the folds after the first would take longer than this in
#: one (the first fold's seconds x the folds left): starting the processes and importing the
#: library in them costs 2-3 s (measured 2026-11-26)
POOL_WORTH_SECONDS = 5.0


#: at most this many pairs of one fold are kept (a uniform sample, from the fold's ``pairs`` stream)
PAIRS_PER_FOLD = 5_000
PAIR_COLUMNS = ["fold", "model_a", "model_b", "estimate_diff", "truth_diff", "differing", "shared"]


def fold_pairs(
    ids, scores: np.ndarray, answered: np.ndarray, estimates: np.ndarray, k: int, seed: int, cap: int = PAIRS_PER_FOLD
) -> list[tuple]:
    """Pairs ``a < b`` of one calibration fold's models (rows of ``scores``, each model's
    ``answered`` items and ``estimates``), at most ``cap`` (a uniform sample from the fold's
    ``pairs`` stream): ``(fold, model_a, model_b, estimate_diff, truth_diff, differing, shared)``,
    differences ``b - a``; ``shared`` the items both answered, ``differing`` the sum over them of
    ``|score_a - score_b|`` (for 0/1 scores: the items they answered differently)."""
    n = len(ids)
    if n < 2:
        return []
    a, b = np.triu_indices(n, k=1)
    if len(a) > cap:
        keep = np.sort(seeding.rng(seed, k + 1, "pairs").choice(len(a), cap, replace=False))
        a, b = a[keep], b[keep]
    columns = np.flatnonzero(answered.any(axis=0))  # the items any of them answered
    mask, values = answered[:, columns], np.asarray(scores[:, columns], dtype=np.float64)
    differing, shared = np.empty(len(a)), np.empty(len(a), dtype=np.int64)
    for start in range(0, len(a), 2_048):  # a block of pairs at a time: pairs x answered items
        i, j = a[start : start + 2_048], b[start : start + 2_048]
        both = mask[i] & mask[j]
        shared[start : start + len(i)] = both.sum(axis=1)
        differing[start : start + len(i)] = (np.abs(values[i] - values[j]) * both).sum(axis=1)
    truth = np.asarray(scores, dtype=np.float64).mean(axis=1)
    est = np.asarray(estimates, dtype=np.float64)
    return [
        (k, ids[x], ids[y], float(est[y] - est[x]), float(truth[y] - truth[x]), float(d), int(c))
        for x, y, d, c in zip(a, b, differing, shared)
    ]


def _calibration_fold(
    scores: np.ndarray, ids, subtasks, fold_of: np.ndarray, k: int, method: str, params, budget: int, seed: int
) -> tuple[list, float, list]:
    """Calibration fold ``k``: the method fitted without the fold's models (trial ``k + 1``), then
    each of them estimated alone, as a new model is. Its rows, seconds and pairs (:func:`fold_pairs`)."""
    t0 = time.perf_counter()
    m = fit_method(method, params, scores[fold_of != k], subtasks, budget, seed, k + 1)
    rows, members = [], np.flatnonzero(fold_of == k)
    answered = np.zeros((len(members), scores.shape[1]), dtype=bool)
    for r, i in enumerate(members):
        oracle = Oracle(scores[i : i + 1], budget)
        est = m.estimate(oracle, seeding.rng(seed, k + 1, estimate_stream(method)))
        answered[r] = oracle.answered[0]
        rows.append((ids[i], k, float(np.asarray(est)[0]), float(scores[i].mean())))
    seconds = time.perf_counter() - t0
    pairs = fold_pairs([ids[i] for i in members], scores[members], answered, [row[2] for row in rows], k, seed)
    return rows, seconds, pairs


def _fold_task(job: tuple, k: int) -> tuple[list, float, list]:
    """Calibration fold ``k`` in a worker process (:class:`benchcast.new_model.workers.Workers`)."""
    scores, ids, subtasks, fold_of, method, params, budget, seed = job
    return _calibration_fold(scores, ids, subtasks, fold_of, k, method, params, budget, seed)


def calibrate(
    board: Leaderboard,
    method: str,
    params: dict | None,
    budget: int,
    folds: int,
    seed: int,
    log=print,
    cores: int = 1,
    first_seconds: float | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every model's estimate from the method fitted without the model's fold, and pairs of models
    of one fold (:func:`fold_pairs`) (module docstring).

    The first fold runs in this process; its seconds decide the rest: with ``cores`` > 1 and more
    than :data:`POOL_WORTH_SECONDS` of folds left, they run in that many processes
    (:class:`benchcast.new_model.workers.Workers`), each with one BLAS thread as every fit here has: the table is the same
    whatever ``cores``.
    ``first_seconds`` (the whole fit's, when just measured) sizes the first time estimate.
    """
    scores, ids, subtasks = board.matrix.scores, board.matrix.model_ids, board.matrix.subtasks
    folds = min(int(folds), scores.shape[0])
    if folds < 2:
        raise ConfigError(f"calibration needs at least 2 folds of models, got {folds}")
    fold_of = fold_of_models(scores.shape[0], folds, seed)
    args = (scores, ids, subtasks, fold_of)
    about = f": about {_duration(first_seconds * folds)} on one core" if first_seconds is not None else ""
    log(f"calibrating on {folds} folds of models{about}")
    by_fold, pairs_of, took = {}, {}, []

    def record(k: int, rows: list, seconds: float, pairs: list, workers: int) -> None:
        by_fold[k], pairs_of[k] = rows, pairs
        took.append(seconds)
        left = sum(took) / len(took) * (folds - len(by_fold)) / workers
        tail = f", about {_duration(left)} left" if len(by_fold) < folds else ""
        log(f"calibration fold {k + 1} of {folds}: {len(rows)} models, {seconds:.1f}s ({len(by_fold)} done{tail})")

    with one_blas_thread():
        rows, seconds, pairs = _calibration_fold(*args, 0, method, params, budget, seed)
    workers = max(1, min(int(cores), folds - 1))
    if seconds * (folds - 1) < POOL_WORTH_SECONDS:
        workers = 1  # starting the processes would cost more than the folds take
    record(0, rows, seconds, pairs, workers)
    rest = range(1, folds)
    if workers == 1:
        with one_blas_thread():
            for k in rest:
                record(k, *_calibration_fold(*args, k, method, params, budget, seed), workers)
    else:
        log(f"the other {folds - 1} folds on {workers} processes: about {_duration(seconds * (folds - 1) / workers)}")
        # the workers inherit one BLAS thread; an error or an interrupt stops the other folds at once
        with one_blas_thread(), Workers(workers, _fold_task, (*args, method, params, budget, seed)) as pool:
            for k, (rows, seconds, pairs) in pool.run_unordered(rest):
                record(k, rows, seconds, pairs, workers)
    rows = [row for k in range(folds) for row in by_fold[k]]
    pairs = [pair for k in range(folds) for pair in pairs_of[k]]
    return (
        pd.DataFrame(rows, columns=["model_id", "fold", "estimate", "truth"]),
        pd.DataFrame(pairs, columns=PAIR_COLUMNS),
    )


def _duration(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 90 else f"{seconds / 60:.1f} min"


def build_fit(
    board: Leaderboard,
    method: str,
    params: dict | None,
    budget: int,
    seed: int = 0,
    folds: int = DEFAULT_FOLDS,
    data_dir: str | Path = "results",
    log=print,
    cores: int = 1,
) -> StoredFit:
    """Fit ``method`` on every model of ``board``, calibrate it (on ``cores`` processes), and store
    both. The stored bytes are the same whatever ``cores``: every fit runs with one BLAS thread."""
    t0 = time.perf_counter()
    with one_blas_thread():
        m = fit_method(method, params, board.matrix.scores, board.matrix.subtasks, budget, seed, 0)
    fit_seconds = time.perf_counter() - t0
    log(f"fitted on all {len(board.matrix.model_ids)} models in {fit_seconds:.1f}s")
    calibration, pairs = calibrate(board, method, params, budget, folds, seed, log, cores, fit_seconds)
    meta = {
        "dataset": board.key,
        "matrix_sha256": board.checksum,
        "models": len(board.matrix.model_ids),
        "items": len(board.matrix.item_ids),
        "method": method,
        "params": m.params(),
        "budget": int(budget),
        "seed": int(seed),
        "folds": int(min(folds, len(board.matrix.model_ids))),
        "selection_id": selection_id(board, m, budget, seed),
    }
    meta = json.loads(json.dumps(meta, sort_keys=True))  # as a later call reads it back: same output, same bytes
    seconds = {"fit": fit_seconds, "calibration": time.perf_counter() - t0 - fit_seconds}
    folder = fit_folder(data_dir, board, method, budget)
    parts = ("calibration.parquet", "pairs.parquet", "arrays.parquet")
    (folder / "fit.json").unlink(missing_ok=True)  # a fit being replaced is no fit until the new one is whole
    try:
        write_parquet_atomic(calibration, folder / "calibration.parquet")
        write_parquet_atomic(pairs, folder / "pairs.parquet")
        # fit.json last: its presence means whole
        write_state(m, meta, folder, files=parts[:2])
    except BaseException:  # an error or an interrupt: no part of a fit without its fit.json
        if not (folder / "fit.json").exists():
            for name in parts:
                (folder / name).unlink(missing_ok=True)
        raise
    return StoredFit(m, meta, calibration, folder, seconds, pairs)


def load_fit(
    board: Leaderboard,
    method: str,
    params: dict | None,
    budget: int,
    seed: int,
    data_dir: str | Path,
    folds: int,
    log=print,
    need_pairs: bool = False,
) -> StoredFit | None:
    """The stored fit for exactly these settings, or None when there is none, it is stale, of an
    older stored-fit format or damaged (its files do not match their checksums; said through
    ``log``), or, with ``need_pairs`` (``benchcast compare``), stored before its calibration pairs
    existed."""
    folder = fit_folder(data_dir, board, method, budget)
    if not (folder / "fit.json").is_file():
        return None
    if need_pairs and not (folder / "pairs.parquet").is_file():
        log(f"{folder}: this fit was stored without the held-out pairs compare calibrates on: rebuilding it")
        return None
    try:
        m, meta = read_state(folder)
    except (OldFitFormat, CorruptFit) as unusable:
        log(f"{unusable.path}: {unusable.problem}: rebuilding the fit")
        return None
    if not isinstance(m, Method):
        raise DataError(folder / "fit.json", "state", "does not hold a method", "delete the folder and rebuild the fit")
    wanted = make_method(method, params)
    stale = (
        meta.get("matrix_sha256") != board.checksum
        or meta.get("seed") != seed
        or meta.get("folds") != min(int(folds), len(board.matrix.model_ids))
        or meta.get("params") != json.loads(json.dumps(wanted.params()))
    )
    if stale:
        return None
    pairs = pd.read_parquet(folder / "pairs.parquet") if (folder / "pairs.parquet").is_file() else None
    return StoredFit(m, meta, pd.read_parquet(folder / "calibration.parquet"), folder, pairs=pairs)


@contextmanager
def build_lock(folder: Path, log=print):
    """Held while a fit is built into ``folder``: processes that need the same fit at once (a lab
    sharing one data folder, a script started several times) build it once; the others wait here,
    then read it. An operating-system lock (``flock`` through :mod:`filelock`), so a process that
    dies holding it releases it. The lock file ``.build.lock`` stays in the folder."""
    from filelock import FileLock, Timeout

    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / ".build.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        log(f"another process is building this fit in {folder}: waiting for it")
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def conformal_halfwidth(calibration: pd.DataFrame, level: float) -> float:
    """Split-conformal half-width: the ceil((m + 1) * level)-th smallest |estimate - truth| of the
    m calibration models (infinite when m is too small for the level)."""
    if not 0 < level < 1:
        raise ConfigError(f"interval level must be between 0 and 1, got {level}")
    residuals = np.sort(np.abs(calibration["estimate"].to_numpy() - calibration["truth"].to_numpy()))
    k = math.ceil((len(residuals) + 1) * level)
    return float(residuals[k - 1]) if k <= len(residuals) else math.inf


__getattr__ = renamed_names(__name__)  # the names renamed in 0.3.0, for one release
