"""The guarded products of ``benchcast.blas`` against the two ways to avoid threaded SYRK's fault.

    python scripts/performance/benchmark_guarded_products.py --sizes 24200x100 25000x5000 --repeats 3 --out F.csv

Per size (rows x columns of a 0/1 float64 matrix ``X``, the product ``X @ X.T``), four variants, each
in its own process (the BLAS reads its thread count when it loads), in turn within every round:

* ``numpy_1_thread`` -- NumPy's ``X @ X.T`` (SYRK) with one BLAS thread: the thread-limit route, and
  what the workflow's jobs and the command line compute (the baseline of the ratios);
* ``guarded_default_threads`` -- ``benchcast.blas.rows_gram`` with the BLAS's own thread count (one per
  core): what the Python API runs;
* ``guarded_1_thread`` -- the same with one thread;
* ``triangle_blocks_default_threads`` -- the alternative the guard was measured against: SYRK on each
  diagonal block of 4,096 rows (far under the fault), GEMM for the blocks left of it, then mirrored
  above the diagonal (SYRK's arithmetic, but a single-threaded strided copy of half the matrix).

NumPy's product with the default threads is not timed: from a side of about 24,100 it kills the process
(``tests/native``). Prints a Markdown table (median seconds, and each variant's median ratio to the
baseline of its round) and the machine's load average before each size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd

from benchcast.blas import THREAD_VARIABLES

CODE = """
import json, sys, time, numpy as np
from benchcast.blas import rows_gram
n, k, how = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
X = np.random.default_rng(0).integers(0, 2, size=(n, k)).astype(np.float64)
t = time.perf_counter()
if how == "numpy":
    G = X @ X.T
elif how == "guarded":
    G = rows_gram(X)
else:  # the triangle: diagonal blocks by SYRK, the blocks left of them by GEMM, mirrored
    G = np.empty((n, n))
    for s in range(0, n, 4096):
        e = min(s + 4096, n)
        G[s:e, s:e] = X[s:e] @ X[s:e].T
        if s:
            np.matmul(X[s:e], X[:s].T, out=G[s:e, :s])
            G[:s, s:e] = G[s:e, :s].T
print(json.dumps({"seconds": time.perf_counter() - t, "check": float(G[:: 97, :: 89].sum())}))
"""

VARIANTS = {  # name: (product, threads: None = the BLAS's default)
    "numpy_1_thread": ("numpy", "1"),
    "guarded_default_threads": ("guarded", None),
    "guarded_1_thread": ("guarded", "1"),
    "triangle_blocks_default_threads": ("triangle", None),
}


def one(n: int, k: int, how: str, threads: str | None) -> dict:
    env = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    if threads is not None:
        env.update(dict.fromkeys(THREAD_VARIABLES, threads))
    proc = subprocess.run(
        [sys.executable, "-c", CODE, str(n), str(k), how], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"{how} at {n}x{k} with threads={threads}: exit {proc.returncode}\n{proc.stderr[-1500:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["24200x100", "25000x5000"], help="ROWSxCOLUMNS")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    rows = []
    for size in args.sizes:
        n, k = (int(v) for v in size.split("x"))
        load = os.getloadavg()[0]
        times: dict[str, list[float]] = {name: [] for name in VARIANTS}
        checks = set()
        for _ in range(args.repeats):
            for name, (how, threads) in VARIANTS.items():
                result = one(n, k, how, threads)
                times[name].append(result["seconds"])
                checks.add(result["check"])
        if len(checks) != 1:
            raise SystemExit(f"{size}: the variants' products differ ({sorted(checks)})")
        base = times["numpy_1_thread"]
        for name, secs in times.items():
            rows.append(
                {
                    "size": size,
                    "variant": name,
                    "median_s": statistics.median(secs),
                    "ratio_to_numpy_1_thread": statistics.median(s / b for s, b in zip(secs, base, strict=True)),
                    "repeats": args.repeats,
                    "load_1min_before": load,
                }
            )
    table = pd.DataFrame(rows)
    print(table.to_markdown(index=False, floatfmt=".3g"))
    if args.out:
        table.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
