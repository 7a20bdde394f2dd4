"""TailoredBench's CLARA N-set for one new model: the PAM engine chosen per sample (before) or for
all samples (after), timed alternately in one process after one fit (the compiled engine loaded).

    python scripts/performance/tailored_clara_engine.py --size 1000x10000 --repeats 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import benchcast.methods.tailored_bench as TB
from benchcast.methods import make_method
from benchcast.oracle import Oracle
from benchcast.scaling.benchmark import WHOLE_LEADERBOARD
from benchcast.scaling.synthetic import leaderboard


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="1000x10000")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    models, items = (int(x) for x in a.size.split("x"))
    S = leaderboard(models, items, 0).scores
    params = WHOLE_LEADERBOARD["tailoredbench"]
    m = make_method("tailoredbench", params).fit(S[:-20], 100, np.random.default_rng(0))
    rule = TB._engine
    sample = params["clara"]["sample"]
    variants = {"per sample (before)": lambda one, points: rule(one, sample), "all samples (after)": rule}
    seconds: dict[str, list[float]] = {}
    estimates: dict[str, set[float]] = {}
    for _ in range(a.repeats):
        for label, engine in variants.items():
            TB._engine = engine
            t0 = time.perf_counter()
            value = m.estimate(Oracle(S[-20:-19], 100), np.random.default_rng(1))
            seconds.setdefault(label, []).append(time.perf_counter() - t0)
            estimates.setdefault(label, set()).add(float(value[0]))
    TB._engine = rule
    for label in variants:
        print(f"{label}: {', '.join(f'{s:.2f}' for s in seconds[label])} s; estimates {sorted(estimates[label])}")


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
