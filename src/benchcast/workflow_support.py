"""Small helpers for the thin workflow scripts: one-thread BLAS, logging to the rule's log."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable


def single_threaded() -> None:
    """Pin BLAS/OpenMP to one thread: jobs run in parallel instead, and a fixed thread count
    keeps floating-point reduction order -- hence outputs -- identical whatever ``--cores``.

    ``threadpool_limits`` only reaches the BLAS libraries already loaded (NumPy's), and SciPy
    ships its own OpenBLAS, loaded on first use of ``scipy.linalg``; a library loaded later
    would start one thread per core (which, on a busy machine, made Random-Search-Learn's
    LAPACK calls ~50x slower). So the thread variables are also set in the environment,
    which OpenBLAS and OpenMP read when they load (``tests/test_harness.py`` checks that
    SciPy's OpenBLAS then runs one thread). SciPy itself is not imported here: most jobs
    never use it, and its import cost every job ~0.1 s.
    """
    import os

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def job_logger(snakemake) -> Callable[[str], None]:  # noqa: ANN001 - the Snakemake script object
    """Return ``log(msg)`` that appends timestamped lines to the rule's ``log:`` file (flushed)."""
    single_threaded()
    path = Path(snakemake.log[0]) if len(snakemake.log) else None
    fh = open(path, "w") if path else sys.stderr
    start = time.perf_counter()

    def log(msg: str) -> None:
        fh.write(f"[{time.perf_counter() - start:8.1f}s] {msg}\n")
        fh.flush()

    return log
