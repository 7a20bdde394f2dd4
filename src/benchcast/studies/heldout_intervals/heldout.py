"""The honest test of ``benchcast select`` / ``estimate``: every model of a leaderboard plays a new
model once, through the same functions the command line calls.

The models are dealt into ``outer_folds`` folds (seed stream ``deploy:heldout``: seed streams keep
their first names, so that outputs keep their bytes); where the leaderboard names families
(:func:`~benchcast.studies.heldout_intervals.pairs.family_keys`), a family is dealt into one fold, so
that its members are held out together, as two checkpoints of a user's own model are new together
(:func:`deal_folds`). For each fold, the leaderboard without it is what a user would have: its stored fit and calibration are built
exactly as the command line builds them (:func:`benchcast.new_model.fits.build_fit`, written and read
back), then each model of the fold answers the items :func:`~benchcast.new_model.api.next_items`
selects, batch by batch, from its own row, and :func:`~benchcast.new_model.api.estimate_from` gives
its estimate and interval. Coverage, mean width and error are then those a user would see.

Each fold is a user with its own ``--seed`` (:func:`fold_seed`), because the intervals promise
coverage over new models *and* over the method's random choices (the conformal calibration and
AIPW's jackknife both average over selections): with one seed for every fold, Random-Sampling and
AIPW would draw the very same core set in every fold, and a cell's coverage would be that of one
selection (README "For a user with a new model": a cell moved by up to 11 points between runs).

Also :func:`cli_seconds`: the wall time of the command line itself (a new process per call, with
the stored fit built), for the 2-second limit, with CSV answers and, where the dataset has a
harness identity, with lm-evaluation-harness files (``--format lm-eval``, answers from harness logs).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.data.item_level import ResponseMatrix
from benchcast.new_model.api import estimate_from, next_items
from benchcast.new_model.auto import cv_errors
from benchcast.new_model.fits import build_fit, load_fit
from benchcast.new_model.leaderboard import Leaderboard, checksum
from benchcast.studies.heldout_intervals.pairs import fold_pairs

#: the measured columns of :func:`heldout`'s rows (kept apart: the other columns are deterministic)
TIMING_COLUMNS = ("select_seconds", "estimate_seconds", "fit_seconds")


def _without(board: Leaderboard, keep: np.ndarray, fold: int) -> Leaderboard:
    m = board.matrix
    sub = ResponseMatrix(
        m.dataset,
        m.scores[keep],
        [m.model_ids[i] for i in keep],
        [m.model_names[i] for i in keep],
        m.item_ids,
        m.subtasks,
    )
    return Leaderboard(f"{board.key}-without-fold{fold}", sub, checksum(sub), board.path)


def fold_seed(seed: int, fold: int) -> int:
    """The ``--seed`` of outer fold ``fold``'s user (stream ``deploy:heldout-seed``)."""
    # seed-stream labels keep their first names: they feed the generators, so they decide the bytes
    return int(seeding.rng(seed, fold, "deploy:heldout-seed").integers(2**31 - 1))


def deal_folds(n_models: int, outer: int, seed: int, families=None) -> np.ndarray:
    """Each model's held-out fold: the models in the order of a permutation (stream
    ``deploy:heldout``), dealt in turn; a model whose family (``families[i]``, None for none) was
    dealt already joins its fold. Without families, the ``p``-th model of the permutation goes to fold
    ``p % outer``."""
    order = seeding.rng(seed, 0, "deploy:heldout").permutation(
        n_models
    )  # (the label's first name: it decides the bytes)
    fold_of = np.empty(n_models, dtype=np.int64)
    if families is None:
        fold_of[order] = np.arange(n_models) % outer
        return fold_of
    dealt: dict[str, int] = {}
    turn = 0
    for i in order.tolist():
        key = families[i]
        if key is not None and key in dealt:
            fold_of[i] = dealt[key]
            continue
        fold_of[i] = turn % outer
        turn += 1
        if key is not None:
            dealt[key] = int(fold_of[i])
    return fold_of


def play_new_model(board: Leaderboard, fit, row: np.ndarray, level: float) -> dict:
    """One model answering from ``row`` whatever is selected, batch by batch, then estimated."""
    item_ids = board.matrix.item_ids
    index = {item: j for j, item in enumerate(item_ids)}
    answers: dict[str, float] = {}
    select_seconds, batches = [], 0
    while True:
        t0 = time.perf_counter()
        sel = next_items(board, fit, board.answers(answers))
        select_seconds.append(time.perf_counter() - t0)
        if sel.complete:
            break
        batches += 1
        answers.update({item: float(row[index[item]]) for item in sel.items.item_id})
    t0 = time.perf_counter()
    result = estimate_from(board, fit, board.answers(answers), level)
    result.update(batches=batches, select_seconds=max(select_seconds), estimate_seconds=time.perf_counter() - t0)
    result["answers"] = answers
    return result


def heldout(
    board: Leaderboard,
    method: str,
    params: dict | None,
    budget: int,
    seed: int,
    folds: int,
    outer_folds: int,
    level: float,
    log=print,
    pairs_out: list | None = None,
    families=None,
    calibration_pairs_out: list | None = None,
    calibration_out: list | None = None,
) -> pd.DataFrame:
    """One row per model of ``board``: its estimate, interval and truth when held out (module doc),
    and ``calibration_mae``, the mean absolute error over the calibration rows of the fit it was
    estimated with (what ``--method auto`` compares, :mod:`benchcast.new_model.auto`).
    With ``pairs_out`` (a list), every pair of one held-out fold's models is compared as
    ``benchcast compare`` compares two new models, and each pair's row appended to it
    (:func:`benchcast.studies.heldout_intervals.pairs.fold_pairs`). ``families``: each model's family
    or None (:func:`deal_folds`). With ``calibration_pairs_out`` (a list), each held-out fold's fit's
    calibration pairs (what its paired intervals were calibrated on) are appended to it, a frame with
    ``heldout_fold``, so that another calibration can be tried on the same pairs
    (:func:`benchcast.studies.heldout_intervals.pairs.conformal_again`). With ``calibration_out``, each
    held-out fold's fit's calibration rows (``model_id, fold, estimate, truth`` and ``heldout_fold``):
    the cross-validation ``auto`` chooses by, model by model."""
    scores, ids = board.matrix.scores, board.matrix.model_ids
    n_models = len(ids)
    outer = min(int(outer_folds), n_models)
    fold_of = deal_folds(n_models, outer, seed, families)
    rows = []
    with tempfile.TemporaryDirectory(prefix="benchcast-heldout-") as work:
        for f in range(outer):
            sub = _without(board, np.flatnonzero(fold_of != f), f)
            user_seed = fold_seed(seed, f)
            t0 = time.perf_counter()
            build_fit(sub, method, params, budget, user_seed, folds, work, log=lambda s: None)
            fit = load_fit(sub, method, params, budget, user_seed, work, folds)  # read back, as the CLI does
            fit_seconds = time.perf_counter() - t0
            calibration_mae = float(cv_errors(fit.calibration).mean())
            members = []
            for i in np.flatnonzero(fold_of == f):
                r = play_new_model(sub, fit, scores[i], level)
                family = None if families is None else families[i]
                members.append(
                    {"model_id": ids[i], "truth": float(scores[i].mean()), "row": scores[i], "family": family, **r}
                )
                rows.append(
                    {
                        "model_id": ids[i],
                        "fold": f,
                        "seed": user_seed,
                        "truth": float(scores[i].mean()),
                        **{k: r[k] for k in ("estimate", "lower", "upper", "conformal_lower", "conformal_upper")},
                        **{k: r[k] for k in ("items_used", "batches")},
                        "calibration_mae": calibration_mae,
                        **{k: r[k] for k in ("select_seconds", "estimate_seconds")},
                        "fit_seconds": fit_seconds,
                    }
                )
            if pairs_out is not None:
                pairs_out += fold_pairs(f, fit, level, members, board.matrix.item_ids)
            if calibration_pairs_out is not None:
                calibration_pairs_out.append(fit.pairs.assign(heldout_fold=f))
            if calibration_out is not None:
                calibration_out.append(fit.calibration.assign(heldout_fold=f))
            log(
                f"{board.key} {method} n={budget}: held-out fold {f + 1} of {outer}, fit and calibration {fit_seconds:.1f}s"
            )
    return pd.DataFrame(rows)


def summarise(rows: pd.DataFrame) -> dict:
    """Coverage of the intervals, their mean width and the mean absolute error (0-1 scale)."""
    covered = (rows.lower <= rows.truth) & (rows.truth <= rows.upper)
    conformal = (rows.conformal_lower <= rows.truth) & (rows.truth <= rows.conformal_upper)
    return {
        "models": len(rows),
        "coverage": float(covered.mean()),
        "mean_width": float((rows.upper - rows.lower).mean()),
        "conformal_coverage": float(conformal.mean()),
        "conformal_width": float((rows.conformal_upper - rows.conformal_lower).mean()),
        "mae": float((rows.estimate - rows.truth).abs().mean()),
        "max_select_seconds": float(rows.select_seconds.max()),
        "max_estimate_seconds": float(rows.estimate_seconds.max()),
    }


def tables(
    cells, rows: list[pd.DataFrame], timings: list[pd.DataFrame], cli: list[dict]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The held-out test per (dataset, method, budget) -- coverage, mean width, MAE -- and the
    seconds per call, in process (the held-out runs' largest) and on the command line."""
    held, speed = [], []
    for (dataset, method, budget), r, t, c in zip(cells, rows, timings, cli):
        s = summarise(r.assign(**{k: t[k].to_numpy() for k in TIMING_COLUMNS}))
        key = {"dataset": dataset, "method": method, "budget": int(budget)}
        kept = ("models", "coverage", "mean_width", "conformal_coverage", "conformal_width", "mae")
        held.append({**key, **{k: s[k] for k in kept}})
        speed.append(
            {
                **key,
                "select_seconds_in_process": s["max_select_seconds"],
                "estimate_seconds_in_process": s["max_estimate_seconds"],
                "cli_select_seconds": c["select_seconds"],
                "cli_select_calls": c["select_calls"],
                "cli_estimate_seconds": c["estimate_seconds"],
                "cli_lm_eval_select_seconds": c.get("lm_eval_select_seconds", float("nan")),
                "cli_lm_eval_estimate_seconds": c.get("lm_eval_estimate_seconds", float("nan")),
                "fit_seconds": c["fit_seconds"],
                "calibration_seconds": c["calibration_seconds"],
            }
        )
    return pd.DataFrame(held), pd.DataFrame(speed)


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or "building" in proc.stderr:  # a rebuild would time the fit, not the call
        raise RuntimeError(f"{' '.join(cmd)} did not read the stored fit:\n{proc.stderr[-2000:]}")


def cli_seconds(
    dataset: str, method: str, budget: int, data_dir: str | Path, params: dict | None, folds: int, seed: int
) -> dict:
    """Wall seconds of ``benchcast select`` (each batch) and ``benchcast estimate``, each a new
    process, with the stored fit in ``data_dir``; answers are those of the leaderboard's first
    model (only the timing matters here)."""
    from benchcast.new_model.leaderboard import load_leaderboard

    board = load_leaderboard(dataset, data_dir)
    row = dict(zip(board.matrix.item_ids, board.matrix.scores[0]))
    base = [sys.executable, "-m", "benchcast.cli"]
    extra = ["--data-dir", str(data_dir), "--folds", str(folds), "--seed", str(seed)]
    extra += ["--params", json.dumps(params)] if params else []
    with tempfile.TemporaryDirectory(prefix="benchcast-cli-") as work:
        items, answers = Path(work) / "items.csv", Path(work) / "answers.csv"
        pd.DataFrame(columns=["item_id", "score"]).to_csv(answers, index=False)
        select_seconds = []
        while True:
            cmd = [*base, "select", dataset, "--method", method, "--budget", str(budget), "--out", str(items)]
            if select_seconds:
                cmd += ["--answers", str(answers)]
            t0 = time.perf_counter()
            _run(cmd + extra)
            select_seconds.append(time.perf_counter() - t0)
            batch = pd.read_csv(items, dtype=str, keep_default_na=False)
            if batch.empty:
                break
            done = pd.read_csv(answers, dtype=str, keep_default_na=False)
            batch["score"] = [int(row[i]) for i in batch.item_id]
            pd.concat([done, batch[["item_id", "score"]]]).to_csv(answers, index=False)
        cmd = [
            *base,
            "estimate",
            dataset,
            "--method",
            method,
            "--answers",
            str(answers),
            "--budget",
            str(budget),
            "--out",
            str(Path(work) / "e.json"),
        ]
        t0 = time.perf_counter()
        _run(cmd + extra)
        estimate_seconds = time.perf_counter() - t0
        harness = _lm_eval_seconds(
            board, [*base, "select", dataset], [*base, "estimate", dataset], method, budget, extra, work
        )
    return {
        "select_calls": len(select_seconds),
        "select_seconds": max(select_seconds),
        "estimate_seconds": estimate_seconds,
        **harness,
    }


def _lm_eval_seconds(board, select, estimate, method: str, budget: int, extra: list[str], work: str) -> dict:
    """The same through lm-evaluation-harness files, where the dataset has a harness identity:
    ``select --format lm-eval`` (each round) and ``estimate`` from the rounds' harness logs
    (written from the leaderboard's first model, :mod:`benchcast.lm_eval.simulate`)."""
    from benchcast.data.harness_identity import harness_map
    from benchcast.lm_eval.simulate import write_logs

    hmap = harness_map(board)
    if not hmap.usable:
        return {}
    index, row, rounds, seconds = hmap.index(), board.matrix.scores[0], [], []
    while True:
        samples = Path(work) / f"samples{len(rounds) + 1}.json"
        cmd = [*select, "--method", method, "--budget", str(budget), "--format", "lm-eval", "--out", str(samples)]
        t0 = time.perf_counter()
        _run(cmd + (["--answers", *rounds] if rounds else []) + extra)
        seconds.append(time.perf_counter() - t0)
        if not samples.exists():
            break
        picked = [index[(t, d)] for t, docs in json.loads(samples.read_text()).items() for d in docs]
        folder = Path(work) / f"lm_eval_round{len(rounds) + 1}"
        write_logs(folder, "heldout/model", {j: row[j] for j in picked}, hmap, np.random.default_rng(len(rounds)))
        rounds.append(str(folder))
        samples.unlink()
    cmd = [*estimate, "--method", method, "--budget", str(budget), "--answers", *rounds]
    t0 = time.perf_counter()
    _run(cmd + extra)
    return {"lm_eval_select_seconds": max(seconds), "lm_eval_estimate_seconds": time.perf_counter() - t0}
