"""Random-Search-Learn's fit with this code and an older checkout, side by side, at given shapes.

Two kinds of case: MDAD's (below) and the "misses the mark" grid's, ``mtm:dataset:split:n``: the first
``--trials`` trials of the workflow's ``results/splits/misses_the_mark/<dataset>/<split>.parquet``,
each fitted from the stream the grid's jobs use, the core sets of all of them compared.

MDAD's cross-paper grid fits Random-Search-Learn (10,000 candidates) on up to 300 source models and
the seen half of the items, at sizes up to 250 items: shapes the "misses the mark" grid never reaches
(its Random-Search-Learn jobs are among the artifact's longest). For each ``dataset:n_source:budget``
case this takes MDAD's first trial of the workflow's ``results/data/<dataset>`` (its sources and seen
items, seed 0), fits with each code in a fresh process (one BLAS thread), alternately ``--repeats``
times, and prints the best CPU seconds of each, the ratio and whether both picked the same core set.

    git worktree add /tmp/old <rev>
    python scripts/performance/random_search_versions.py --baseline /tmp/old/src --cases ifeval:300:250 mdad_gpqa:300:200
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from paired import alternate

HERE = Path(__file__).resolve().parents[2] / "src"


def _child(run: Path, case: str, trials: int) -> None:
    import numpy as np
    from threadpoolctl import threadpool_limits

    from benchcast.data.item_level import load_response_matrix
    from benchcast.methods import make_method
    from benchcast.studies.mdad.protocol import draw_trial

    if case.startswith("mtm:"):
        _child_mtm(run, case, trials)
        return
    dataset, n_source, budget = case.split(":")
    matrix = load_response_matrix(run / "results" / "data" / dataset, dataset)
    trial = draw_trial(len(matrix.scores), np.asarray(matrix.subtasks), int(n_source), 50, 0, 0)
    source = matrix.scores[np.ix_(trial.sources, trial.seen)]
    with threadpool_limits(1):
        # compile what the fit compiles first (once per job in the workflow, over its 50 trials)
        make_method("random_search_learn", {"num_search": 20}).fit(source, int(budget), np.random.default_rng(0))
        t0 = time.process_time()
        fit = make_method("random_search_learn", {"num_search": 10_000}).fit(
            source, int(budget), np.random.default_rng(1)
        )
        seconds = time.process_time() - t0
    digest = hashlib.sha256(np.asarray(fit.coreset_, np.int64).tobytes()).hexdigest()[:12]
    print(json.dumps({"s": seconds, "core": digest, "scored": fit.candidates_scored_}))


def _child_mtm(run: Path, case: str, trials: int) -> None:
    import numpy as np
    import pandas as pd
    from threadpoolctl import threadpool_limits

    from benchcast import seeding
    from benchcast.data.item_level import load_response_matrix
    from benchcast.methods import make_method
    from benchcast.trials.runner import splits_by_trial

    _, dataset, split, budget = case.split(":")
    matrix = load_response_matrix(run / "results" / "data" / dataset, dataset)
    splits = pd.read_parquet(run / "results" / "splits" / "misses_the_mark" / dataset / f"{split}.parquet")
    by_trial = splits_by_trial(splits, matrix)
    cores = []
    with threadpool_limits(1):
        t0, w0 = time.process_time(), time.perf_counter()
        for trial in sorted(by_trial)[:trials]:
            fit = make_method("random_search_learn", {"num_search": 10_000}).fit(
                matrix.scores[by_trial[trial][0]], int(budget), seeding.rng(0, trial, "method:random_search_learn")
            )
            cores.append(np.asarray(fit.coreset_, np.int64))
        seconds, wall = time.process_time() - t0, time.perf_counter() - w0
    digest = hashlib.sha256(np.concatenate(cores).tobytes()).hexdigest()[:12]
    print(json.dumps({"s": seconds, "wall": wall, "core": digest}))


def _measure(src: Path, run: Path, case: str, trials: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, __file__, "--child", case, "--run", str(run), "--trials", str(trials)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", type=Path, help="the older code's src folder")
    p.add_argument("--run", type=Path, default=Path("."), help="folder holding results/data")
    p.add_argument(
        "--cases", nargs="+", default=["ifeval:300:250", "musr:300:250", "openllm_math:300:250", "mdad_gpqa:300:200"]
    )
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--trials", type=int, default=10, help="trials of an mtm: case")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _child(args.run, args.child, args.trials)
        return
    if args.baseline is None:
        p.error("--baseline is required")
    print(f"{'case':<22} {'baseline s':>11} {'this code s':>12} {'ratio':>6}  same core set")
    for case in args.cases:
        base, ours = alternate(
            lambda: _measure(args.baseline, args.run, case, args.trials),
            lambda: _measure(HERE, args.run, case, args.trials),
            args.repeats,
        )
        b, o = min(r["s"] for r in base), min(r["s"] for r in ours)
        same = {r["core"] for r in base} == {r["core"] for r in ours} and len({r["core"] for r in ours}) == 1
        print(f"{case:<22} {b:>11.2f} {o:>12.2f} {o / b:>6.2f}  {'yes' if same else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
