"""Trials of one (dataset, split, method, budget) job: splits in, estimates and timings out.

A method sees source rows in full and target rows only through an :class:`~benchcast.oracle.Oracle`
capped at ``n`` distinct items, so every method pays for what it looks at.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.data.item_level import ResponseMatrix, write_parquet_atomic
from benchcast.methods import get_prefit, make_method
from benchcast.methods.base import Progress
from benchcast.oracle import Oracle
from benchcast.renames import renamed_names
from benchcast.trials.splits import make_split


def trial_splits(
    matrix: ResponseMatrix, kind: str, trials: int, base_seed: int, params: dict | None = None
) -> pd.DataFrame:
    """All trials' splits as a tidy table: ``trial, model_id, role`` (``source``/``target``)."""
    acc = matrix.accuracy()
    rows = []
    for t in range(trials):
        split = make_split(kind, acc, seeding.rng(base_seed, t, "split"), params, matrix.file_roles)
        for role, idx in (("source", split.source), ("target", split.target)):
            rows.append(
                pd.DataFrame({"trial": np.int32(t), "model_id": [matrix.model_ids[i] for i in idx], "role": role})
            )
    return pd.concat(rows, ignore_index=True)


def splits_by_trial(splits: pd.DataFrame, matrix: ResponseMatrix) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Back from the table to row indices of ``matrix`` (fails loudly on unknown models)."""
    pos = {m: i for i, m in enumerate(matrix.model_ids)}
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for t, g in splits.groupby("trial", sort=True):
        idx = {
            r: np.array([pos[m] for m in g.loc[g.role == r, "model_id"]], dtype=np.int64) for r in ("source", "target")
        }
        out[int(t)] = (idx["source"], idx["target"])
    return out


@dataclass
class JobResult:
    estimates: pd.DataFrame  # trial, model_id, estimate, truth
    timing: pd.DataFrame  # trial, fit_seconds, estimate_seconds, fit_reused


@dataclass
class PrefitResult:
    """The per-trial fits of one prefit kind (:mod:`benchcast.methods.prefit`) and their seconds."""

    kind: str
    fits: dict[int, object]
    timing: pd.DataFrame  # trial, seconds (kind-specific columns)


def run_prefit(
    matrix: ResponseMatrix,
    splits: pd.DataFrame,
    kind: str,
    settings: Mapping,
    budgets: list[int],
    base_seed: int,
    log: Callable[[str], None] = lambda s: None,
    part: tuple[int, int] | None = None,
) -> PrefitResult:
    """Make every trial's ``kind`` prefit (one workflow job per dataset, split and configuration),
    or with ``part=(k, parts)`` the fits of the k-th of ``parts`` consecutive trial ranges (a kind
    that is ``splittable``; :func:`merge_prefits` joins the parts into the whole, byte for byte)."""
    by_trial = splits_by_trial(splits, matrix)
    prefit = get_prefit(kind)
    only = None
    if part is not None:
        k, parts = part
        if not prefit.splittable:
            raise ValueError(f"a {kind} prefit cannot be split into parts")
        if not 0 <= k < parts:
            raise ValueError(f"part {k} of {parts}: parts are numbered 0 to {parts - 1}")
        only = [int(t) for t in np.array_split(np.array(sorted(by_trial)), parts)[k]]
        log(f"{matrix.dataset}: part {k + 1} of {parts}: trials {only[0]}-{only[-1]}" if only else "no trials")
    log(f"{matrix.dataset}: {kind} prefit of {len(by_trial) if only is None else len(only)} trials")
    fits, timing = prefit.fit_trials(matrix.scores, by_trial, settings, budgets, base_seed, log, only=only)
    return PrefitResult(kind, fits, timing)


def merge_prefits(parts: list[PrefitResult]) -> PrefitResult:
    """One prefit from the prefits of disjoint trial ranges (:func:`run_prefit`'s ``part``): the
    fits in trial order, as one job would have made them."""
    kinds = {p.kind for p in parts}
    if len(kinds) != 1:
        raise ValueError(f"prefit parts of different kinds: {sorted(kinds)}")
    fits: dict[int, object] = {}
    for p in parts:
        overlap = fits.keys() & p.fits.keys()
        if overlap:
            raise ValueError(f"prefit parts overlap on trials {sorted(overlap)[:5]}")
        fits.update(p.fits)
    timing = pd.concat([p.timing for p in parts], ignore_index=True).sort_values("trial", kind="stable")
    return PrefitResult(kinds.pop(), {t: fits[t] for t in sorted(fits)}, timing.reset_index(drop=True))


def write_prefit(result: PrefitResult, folder: str | Path) -> None:
    """``<folder>/<table>.parquet`` for each of the kind's tables, and ``timing.parquet``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in get_prefit(result.kind).to_tables(result.fits).items():
        write_parquet_atomic(table, folder / f"{name}.parquet")
    write_parquet_atomic(result.timing, folder / "timing.parquet")


def read_prefit(folder: str | Path, kind: str) -> PrefitResult:
    """Inverse of :func:`write_prefit`."""
    folder = Path(folder)
    tables = {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet")) if p.stem != "timing"}
    return PrefitResult(kind, get_prefit(kind).from_tables(tables), pd.read_parquet(folder / "timing.parquet"))


def run_job(
    matrix: ResponseMatrix,
    splits: pd.DataFrame,
    method: str,
    method_params: dict | None,
    budget: int,
    base_seed: int,
    log: Callable[[str], None] = lambda s: None,
    prefit: PrefitResult | Mapping[int, object] | None = None,
) -> JobResult:
    """Run ``method`` at budget ``n`` on every trial of ``splits``.

    ``method_params`` may carry ``max_trials`` (not passed to the method): only the first
    ``max_trials`` trials are run -- a documented escape hatch for methods too expensive to
    run on every trial (Random-Search-Learn with 10,000 candidates); results say how many
    trials they cover.

    ``prefit`` holds every trial's precomputed, budget-independent fit (:func:`run_prefit`:
    the IRT fit of P-IRT and GP-IRT, Lasso's path); methods with ``needs_prefit`` receive
    their trial's as ``fit(..., prefit=...)``, others ignore it. Given a :class:`PrefitResult`,
    the timing table gains ``prefit_seconds``: the share of the prefit that is this method's
    training time (Table 2 counts it).
    """
    prefit_seconds = None
    if isinstance(prefit, PrefitResult):
        prefit_seconds = get_prefit(prefit.kind).training_seconds(prefit.timing, method, budget)
        prefit = prefit.fits
    method_params = dict(method_params or {})
    max_trials = method_params.pop("max_trials", None)
    by_trial = splits_by_trial(splits, matrix)
    if max_trials is not None:
        by_trial = dict(sorted(by_trial.items())[: int(max_trials)])
    scores = matrix.scores
    truth_all = scores.mean(axis=1)
    est_frames, timing_rows = [], []
    progress = Progress(len(by_trial), log, f"{matrix.dataset}/{method}/n={budget}")
    cached_key, cached = None, None
    for k, (trial, (src, tgt)) in enumerate(sorted(by_trial.items())):
        m = make_method(method, method_params)
        stream = "coreset" if m.uses_coreset_stream else (m.rng_stream or f"method:{method}")
        fit_rng = seeding.rng(base_seed, trial, stream)
        fit_kwargs = {}
        if m.needs_prefit and prefit is not None:
            if trial not in prefit:
                raise RuntimeError(f"{method}: no precomputed {m.needs_prefit} fit for trial {trial}")
            fit_kwargs["prefit"] = prefit[trial]
        key = src.tobytes()
        reused = m.deterministic_fit and key == cached_key
        t0 = time.perf_counter()
        if reused:
            m = cached
        else:
            m.fit(scores[src], budget, fit_rng, **fit_kwargs)
            if m.deterministic_fit:
                cached_key, cached = key, m
        t1 = time.perf_counter()
        oracle = Oracle(scores[tgt], budget)
        est = np.asarray(m.estimate(oracle, seeding.rng(base_seed, trial, f"estimate:{method}")), dtype=np.float64)
        t2 = time.perf_counter()
        if est.shape != (len(tgt),):
            raise RuntimeError(f"{method} returned shape {est.shape}, expected ({len(tgt)},)")
        if (oracle.spent > budget).any():  # the oracle already refuses; this guards future oracles
            raise RuntimeError(f"{method} exceeded its budget")
        est_frames.append(
            pd.DataFrame(
                {
                    "trial": np.int32(trial),
                    "model_id": [matrix.model_ids[i] for i in tgt],
                    "estimate": est,
                    "truth": truth_all[tgt],
                    "items_queried": oracle.spent.astype(np.int32),
                }
            )
        )
        timing_rows.append((trial, t1 - t0, t2 - t1, reused))
        progress(k + 1)
    timing = pd.DataFrame(timing_rows, columns=["trial", "fit_seconds", "estimate_seconds", "fit_reused"])
    if prefit_seconds is not None:
        timing["prefit_seconds"] = timing.trial.map(prefit_seconds).to_numpy()
    return JobResult(estimates=pd.concat(est_frames, ignore_index=True), timing=timing)


__getattr__ = renamed_names(__name__)  # the names renamed in 0.3.0, for one release
