"""One BLAS/OpenMP thread: how the workflow's jobs, the command line's fits and the benchmarks pin it.

A fixed thread count keeps the floating-point reductions -- hence the outputs -- the same whatever
the machine's cores, and parallel work runs as processes instead. ``threadpool_limits`` only reaches
the BLAS libraries already loaded (NumPy's); SciPy ships its own OpenBLAS, loaded on first use of
``scipy.linalg``, and a library loaded later would start one thread per core (which, on a busy
machine, made Random-Search-Learn's LAPACK calls ~50x slower). So the thread variables are set in
the environment too, which OpenBLAS and OpenMP read when they load.
"""

from __future__ import annotations

import os

#: the variables BLAS and OpenMP libraries read when they load
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def one_thread_environment() -> dict[str, str]:
    """The thread variables set to one, for a process about to be started."""
    return dict.fromkeys(THREAD_VARIABLES, "1")


def single_threaded() -> None:
    """Pin this process to one BLAS/OpenMP thread for good (a workflow job; ``tests/unit/trials/test_trials.py``
    checks that SciPy's OpenBLAS, loaded later, then runs one thread). SciPy itself is not imported
    here: most jobs never use it, and its import would cost every job ~0.1 s."""
    os.environ.update(one_thread_environment())
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
