"""Benchmark TailoredBench's per-target core set (issue 17, acceptance 3): the tailored version
(:func:`benchcast.methods.tailored.cluster_items`: PAM on distinct answer patterns, compiled incremental
swaps, the distance matrix shared by targets with the same native sources) against a
straightforward per-target PAM (the items' own N x N distance matrix, then
:func:`benchcast.methods.pam.pam_reference`, which recounts the cost of every candidate swap), both
measured in this run on the same targets, from the same random item order and initial medoids.

GSM8K (the paper's 75 source / 75 target models), one run's G-set and native sources, inference
count 30. Reports seconds per target for each and their ratio, and the tailored version's numpy
engine (the one a single new model's estimate uses, free of numba's start-up) against its compiled
one; checks that all three choose the same N-set for every target (they must: the distances are
exact, the tie rules the same).

Usage: .venv/bin/python scripts/performance/benchmark_tailored_pam.py [--raw-dir ../shared/raw] [--targets 8]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from benchcast import seeding
from benchcast.methods.pam import pam_reference
from benchcast.methods.tailored import (
    cluster_items,
    consistency,
    distinct_patterns,
    embedding_distances,
    g_set,
    native_sources,
)

GSM8K = "tailoredbench/BenchmarkDatasets/gsm8k"


def straightforward(answers: np.ndarray, fixed: np.ndarray, n_extra: int, rng: np.random.Generator) -> np.ndarray:
    """Item-level PAM from the draws cluster_items makes (scan order, then initial medoids)."""
    n = answers.shape[1]
    scan = rng.permutation(n)
    init = rng.choice(np.setdiff1d(np.arange(n), fixed), size=n_extra, replace=False)
    dist = embedding_distances(answers.T)  # the same exact-grid z-scored Manhattan distances
    return pam_reference(dist, np.concatenate([fixed, init]), len(fixed), order=scan, tol=0.0).medoids


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw-dir", default="../shared/raw")
    ap.add_argument("--targets", type=int, default=8)
    ap.add_argument("--budget", type=int, default=30)
    args = ap.parse_args()
    raw = Path(args.raw_dir) / GSM8K
    source = np.load(raw / "source_model_alldata_acc_0.npy", allow_pickle=False)
    target = np.load(raw / "target_model_alldata_acc_0.npy", allow_pickle=False)
    with threadpool_limits(1):
        gset = g_set(source, 10, seeding.rng(0, 0, "method:tailoredbench"))
        cons = consistency(source[:, gset], target[:, gset])
        natives = [native_sources(cons, t) for t in range(args.targets)]

        def draws(t: int) -> np.random.Generator:  # the same draws for both versions of target t
            return seeding.rng(0, t, "benchmark:tailored_pam")

        cluster_items(distinct_patterns(source[natives[0]].T), gset, 2, np.random.default_rng(0), 10)  # compile

        def tailored_run(engine: str) -> tuple[list[np.ndarray], float]:
            t0 = time.perf_counter()
            shared, medoids = {}, []
            for t, nat in enumerate(natives):
                key = nat.tobytes()
                if key not in shared:
                    shared[key] = distinct_patterns(source[nat].T)
                medoids.append(cluster_items(shared[key], gset, args.budget - 10, draws(t), 9000, engine).medoids)
            return medoids, (time.perf_counter() - t0) / args.targets

        tailored, t_tailored = tailored_run("numba")
        by_numpy, t_numpy = tailored_run("numpy")
        t0 = time.perf_counter()
        plain = [straightforward(source[nat], gset, args.budget - 10, draws(t)) for t, nat in enumerate(natives)]
        t_plain = (time.perf_counter() - t0) / args.targets
    same = all(np.array_equal(a, b) and np.array_equal(a, c) for a, b, c in zip(tailored, plain, by_numpy, strict=True))
    print(f"GSM8K, {args.targets} targets, n-bar = {cons.n_bar} native sources, inference count {args.budget}")
    print(f"straightforward (item distances + PAM recounting)   {t_plain * 1e3:9.1f} ms per target")
    print(f"tailored (patterns, incremental compiled swaps)       {t_tailored * 1e3:9.1f} ms per target")
    print(f"speed-up                                              {t_plain / t_tailored:9.1f}x")
    print(f"tailored, numpy engine (a new process's one target)    {t_numpy * 1e3:9.1f} ms per target")
    print(f"numpy engine / compiled engine                        {t_numpy / t_tailored:9.1f}x")
    print(f"same N-set for every target                           {same}")


if __name__ == "__main__":
    main()
