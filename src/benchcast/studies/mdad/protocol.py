"""The MDAD paper's trial protocol (Yauney et al., Section 4; the released code's
``evaluate-microbenchmarks.py``) and one (method, source count, size) cell run through it.

A **trial** draws, for one number of source models ``n_source``:

1. ``n_targets`` (50) target models uniformly from all models, then ``n_source`` source models
   from the rest (the code's ``random.sample`` twice). Partitions are redrawn for every
   ``n_source``, so source sets are not nested across source counts (as in the code, which runs
   each source count as its own job);
2. the **seen / unseen halves**: every subtask's items shuffled and split at ``floor(n / 2)``
   (seen = the first half), concatenated in subtask order. The micro-benchmark is selected from
   the seen half, which is also the reference ("full benchmark") of the ``seen`` split; the
   unseen half is a fresh draw of the task (the ``unseen`` split, Section 5.4).

Both draws come from benchcast's seed streams (``mdad:models:<n_source>``,
``mdad:halves:<n_source>``), per trial; the released code is unseeded.

A **cell** runs one item-level method at each size ``k``: ``fit`` on the sources' seen-half answers,
``estimate`` through an :class:`~benchcast.oracle.Oracle` over the targets' seen-half answers
(budget ``k``), and records per target the estimate and the correct counts on both halves --
what agreement, MDAD, estimation error and Kendall's tau are computed from
(:mod:`benchcast.stats.mdad`, :func:`trial_metrics`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.methods import make_method
from benchcast.methods.irt_methods import fit_trial_irt
from benchcast.oracle import Oracle
from benchcast.stats.metrics import kendall_tau

SPLITS = ("seen", "unseen")


@dataclass(frozen=True)
class Trial:
    trial: int
    n_source: int
    sources: np.ndarray  # model indices
    targets: np.ndarray
    seen: np.ndarray  # item indices, subtask by subtask
    unseen: np.ndarray


def distinct_models(scores: np.ndarray) -> np.ndarray:
    """Indices of the models whose answers no earlier model repeats exactly (the MDAD study's
    ``dedupe_models``; the paper keeps GPQA's 22 repeated columns)."""
    _, first = np.unique(np.ascontiguousarray(scores), axis=0, return_index=True)
    return np.sort(first)


def select_models(
    models: pd.DataFrame, params_b: tuple[float, float] | None = None, name_regex: str | None = None
) -> np.ndarray:
    """Positions (rows of ``models``, e.g. a matrix's models in order) of the models whose
    ``params_b`` (billions of parameters, sloth's metadata) lies in ``[lo, hi]`` and whose id matches
    ``name_regex`` -- e.g. the paper's 8B instruction-tuned models (Section 5.3)."""
    keep = np.ones(len(models), dtype=bool)
    if params_b is not None:
        if "params_b" not in models.columns:
            raise ValueError("the dataset has no params_b metadata (catalog files.metadata); fix: drop params_b")
        size = pd.to_numeric(models["params_b"], errors="coerce").to_numpy()
        keep &= (size >= params_b[0]) & (size <= params_b[1])
    if name_regex:
        keep &= models["model_id"].astype(str).str.contains(name_regex, regex=True).to_numpy()
    return np.flatnonzero(keep)


def halves(subtasks: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each subtask's items shuffled and halved (seen: the first ``floor(n/2)``), in the order the
    subtasks first appear."""
    subtasks = np.asarray(subtasks)
    _, first = np.unique(subtasks, return_index=True)
    seen, unseen = [], []
    for start in np.sort(first):
        items = rng.permutation(np.flatnonzero(subtasks == subtasks[start]))
        seen.append(items[: len(items) // 2])
        unseen.append(items[len(items) // 2 :])
    return np.concatenate(seen), np.concatenate(unseen)


def draw_trial(
    n_models: int,
    subtasks: np.ndarray,
    n_source: int,
    n_targets: int,
    trial: int,
    base_seed: int,
    fixed_targets: np.ndarray | None = None,
    halves_stream: str = "",
) -> Trial:
    """One trial of the protocol (module docstring). ``fixed_targets`` (model indices) replaces the
    random draw of the targets -- the released code's ``--fixed_target_models`` (Section 5.3: same-size
    models); the sources are still drawn from the other models. ``halves_stream`` extends the halves'
    seed stream (one subtask run as its own benchmark gets its own halves, the trial's models)."""
    if fixed_targets is not None:
        n_targets = len(fixed_targets)
    if n_targets + n_source > n_models:
        raise ValueError(f"{n_targets} targets + {n_source} sources exceed the {n_models} models; fix: lower n_source")
    rng = seeding.rng(base_seed, trial, f"mdad:models:{n_source}")
    if fixed_targets is None:
        targets = rng.choice(n_models, size=n_targets, replace=False)
    else:
        targets = np.asarray(fixed_targets, dtype=np.int64)
    rest = np.setdiff1d(np.arange(n_models), targets)
    sources = rng.choice(rest, size=n_source, replace=False)
    seen, unseen = halves(subtasks, seeding.rng(base_seed, trial, f"mdad:halves:{n_source}{halves_stream}"))
    return Trial(trial, n_source, sources, targets, seen, unseen)


def run_cell(
    scores: np.ndarray,
    subtasks: np.ndarray,
    method: str,
    params: dict | None,
    n_source: int,
    sizes: list[int],
    trials: int,
    base_seed: int,
    n_targets: int = 50,
    fixed_targets: np.ndarray | None = None,
    halves_stream: str = "",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run ``method`` at every size ``k`` of ``sizes`` on ``trials`` trials with ``n_source``
    sources (``fixed_targets``, ``halves_stream``: :func:`draw_trial`). An IRT method's fit is made
    once per trial and serves every size (as the released code's tinyBenchmarks); methods that read
    subtasks get the seen items' subtasks.

    Returns ``(estimates, timing)``: per trial, size and target ``trial, k, model_idx, estimate,
    seen_correct, unseen_correct, n_seen, n_unseen, items_queried``; per trial and size
    ``trial, k, seconds, shared_seconds`` (``seconds``: that size's fit and estimate;
    ``shared_seconds``: the trial's IRT fit, which serves every size -- the same on each row).
    """
    frames, timing = [], []
    for t in range(trials):
        tr = draw_trial(scores.shape[0], subtasks, n_source, n_targets, t, base_seed, fixed_targets, halves_stream)
        source = scores[np.ix_(tr.sources, tr.seen)]
        target_seen = scores[np.ix_(tr.targets, tr.seen)]
        seen_correct = target_seen.sum(axis=1).round().astype(np.int32)
        unseen_correct = scores[np.ix_(tr.targets, tr.unseen)].sum(axis=1).round().astype(np.int32)
        probe = make_method(method, params)
        kwargs, shared_seconds = {}, 0.0
        if probe.uses_item_groups:
            kwargs["groups"] = np.asarray(subtasks)[tr.seen]
        if probe.needs_prefit == "irt":
            t0 = time.perf_counter()
            irt_rng = seeding.rng(base_seed, t, f"mdad:irt:{n_source}")
            kwargs["prefit"] = fit_trial_irt(source, irt_rng, probe.irt_params, with_bias=probe.wants_bias)
            shared_seconds = time.perf_counter() - t0
        for k in sizes:
            m = make_method(method, params)
            t0 = time.perf_counter()
            m.fit(source, k, seeding.rng(base_seed, t, f"mdad:method:{method}:{n_source}:{k}"), **kwargs)
            oracle = Oracle(target_seen, k)
            est = np.asarray(m.estimate(oracle, seeding.rng(base_seed, t, f"mdad:estimate:{method}:{n_source}:{k}")))
            timing.append((t, k, time.perf_counter() - t0, shared_seconds))
            if est.shape != (len(tr.targets),):
                raise RuntimeError(f"{method} returned shape {est.shape}, expected ({len(tr.targets)},)")
            frames.append(
                pd.DataFrame(
                    {
                        "trial": np.int32(t),
                        "k": np.int32(k),
                        "model_idx": tr.targets.astype(np.int32),
                        "estimate": est.astype(np.float64),
                        "seen_correct": seen_correct,
                        "unseen_correct": unseen_correct,
                        "n_seen": np.int32(len(tr.seen)),
                        "n_unseen": np.int32(len(tr.unseen)),
                        "items_queried": oracle.spent.astype(np.int32),
                    }
                )
            )
    columns = ["trial", "k", "seconds", "shared_seconds"]
    return pd.concat(frames, ignore_index=True), pd.DataFrame(timing, columns=columns)


def trial_metrics(estimates: pd.DataFrame) -> pd.DataFrame:
    """Per trial (and size, where ``estimates`` has ``k``) and split: mean absolute estimation error (accuracy, 0-1) and Kendall's tau-b
    against the half's accuracies (the released code's ``make_tidy_results_estimation``)."""
    keys = ["k", "trial"] if "k" in estimates else ["trial"]
    rows = []
    for key, g in estimates.groupby(keys, sort=True):
        est = g["estimate"].to_numpy()
        for split in SPLITS:
            truth = g[f"{split}_correct"].to_numpy() / g[f"n_{split}"].to_numpy()
            rows.append((*key, split, float(np.mean(np.abs(est - truth))), kendall_tau(est, truth)))
    return pd.DataFrame(rows, columns=[*keys, "split", "error", "tau"])
