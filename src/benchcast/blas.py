"""How benchcast calls the BLAS: its thread count, and the products it guards against known faults.

**Threads.** The workflow's jobs, the command line's fits and the benchmarks run one BLAS/OpenMP
thread (:func:`single_threaded`, :func:`one_thread_environment`): a fixed thread count keeps the
floating-point reductions -- hence the outputs -- the same whatever the machine's cores, and parallel
work runs as processes instead. ``threadpool_limits`` only reaches the BLAS libraries already loaded
(NumPy's); SciPy ships its own OpenBLAS, loaded on first use of ``scipy.linalg``, and a library loaded
later would start one thread per core (which, on a busy machine, made Random-Search-Learn's LAPACK
calls ~50x slower). So the thread variables are set in the environment too, which OpenBLAS and
OpenMP read when they load. The Python API (``import benchcast``) changes no thread setting: a
program that imports it keeps its own.

**Guarded products.** NumPy sends the product of a matrix with its own transpose (``a @ a.T``,
``a.T @ a``, ``np.dot(a, a.T)``) to BLAS's SYRK. With more than one thread, the OpenBLAS that NumPy
and SciPy ship (0.3.31, its SkylakeX kernel) faults in threaded SYRK once the product's side passes
about 24,100 (measured: 24,000 x 100 fine, 24,100 x 100 a segmentation fault, at 2 to 32 threads;
the Haswell, Zen and SandyBridge kernels did not fault; numpy issue #19685, OpenBLAS's SkylakeX
buffer size). :func:`rows_gram` and :func:`columns_gram` give those products: below
:data:`SYRK_SAFE_SIDE` exactly NumPy's (the same routine, the same bytes), from it on by row blocks
through GEMM, which computes each block with all the BLAS's threads and never calls SYRK.

**Guarded factorisations.** The same OpenBLAS faults in its threaded LAPACK too, its parallel
factorisations updating the trailing matrix with the same level-3 kernels: ``np.linalg.cholesky``
(``dpotrf``) from a side between 15,000 and 16,000 (measured: 15,000 fine at 2 and 32 threads,
16,000 and 24,200 a segmentation fault), ``np.linalg.solve`` (LU) at 24,200 (16,000 fine). No
GEMM-only route gives the same factorisation, so :func:`lapack_guard` takes the thread limit: one
thread for a factorisation whose side is at least :data:`LAPACK_SAFE_SIDE`, the caller's threads
below it (the same call, the same bytes).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import numpy as np

#: the variables BLAS and OpenMP libraries read when they load
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

#: products of a matrix with its own transpose whose side is at least this go through GEMM by row
#: blocks (:func:`rows_gram`): a margin below the ~24,100 where threaded SYRK faults, and above
#: every mirrored dataset's items (MMLU-Pro: 12,032), so the papers' outputs keep NumPy's bytes
SYRK_SAFE_SIDE = 16_384

#: LAPACK factorisations whose side is at least this run on one thread (:func:`lapack_guard`): a
#: margin below the 15,000-16,000 where threaded Cholesky faults; the workflow and the command line
#: run one thread anyway, so only the Python API's speed at such sides depends on it
LAPACK_SAFE_SIDE = 12_288

#: rows of one GEMM block of a guarded product
_BLOCK_ROWS = 4_096


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


def loaded_libraries() -> set[str]:
    """The files of the BLAS and OpenMP libraries this process has loaded (threadpoolctl's view)."""
    from threadpoolctl import threadpool_info

    return {info["filepath"] for info in threadpool_info()}


#: the variable each kind of library reads its thread count from, in order (threadpoolctl's
#: ``internal_api`` names; OpenMP's variable is every library's fallback)
_READS = {"openblas": ("OPENBLAS_NUM_THREADS",), "mkl": ("MKL_NUM_THREADS",), "blis": ("BLIS_NUM_THREADS",)}


def give_back_defaults(loaded_before: set[str], environment: dict[str, str | None]) -> None:
    """Give each library loaded since ``loaded_before`` the thread count it would have read had it
    loaded outside a one-thread block: its variable in ``environment`` (the variables as they were
    before the block), else one thread per core this process may use, as OpenBLAS and OpenMP count.

    A library that loads inside :func:`benchcast.new_model.fits.one_blas_thread` (SciPy's OpenBLAS on
    the first ``scipy.linalg`` import, scikit-learn's OpenMP) reads the one-thread variables and would
    keep one thread for the rest of the caller's program; this undoes that, and only that."""
    from threadpoolctl import ThreadpoolController

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    for lib in ThreadpoolController().lib_controllers:
        if lib.filepath in loaded_before:
            continue
        names = (*_READS.get(lib.internal_api, ()), "OMP_NUM_THREADS")
        value = next((environment.get(name) for name in names if environment.get(name)), None)
        try:
            wanted = max(1, int(value)) if value else cores
        except ValueError:  # a malformed variable: the library ignored it too
            wanted = cores
        if lib.internal_api == "openblas":  # OpenBLAS caps its variable at the cores it counts
            wanted = min(wanted, cores)
        lib.set_num_threads(wanted)


def rows_gram(a: np.ndarray) -> np.ndarray:
    """``a @ a.T`` (the inner products of ``a``'s rows), safe at any size and thread count.

    Below :data:`SYRK_SAFE_SIDE` rows this *is* ``a @ a.T``; from it on, row blocks
    ``a[i:j] @ a.T``, each a GEMM (a block is not the transpose of the other operand, so NumPy does
    not take SYRK), written into one output: twice SYRK's arithmetic, on every thread the BLAS has.
    """
    a = np.asarray(a)
    if a.ndim != 2 or a.shape[0] < SYRK_SAFE_SIDE:
        return a @ a.T
    n = a.shape[0]
    out = np.empty((n, n), dtype=np.result_type(a.dtype, a.dtype))
    right = a.T
    for start in range(0, n, _BLOCK_ROWS):
        stop = min(start + _BLOCK_ROWS, n)
        np.matmul(a[start:stop], right, out=out[start:stop])
    return out


def columns_gram(a: np.ndarray) -> np.ndarray:
    """``a.T @ a`` (the inner products of ``a``'s columns), safe at any size and thread count: below
    :data:`SYRK_SAFE_SIDE` columns exactly ``a.T @ a``, from it on :func:`rows_gram` of ``a.T``."""
    a = np.asarray(a)
    if a.ndim != 2 or a.shape[1] < SYRK_SAFE_SIDE:
        return a.T @ a
    return rows_gram(a.T)


def lapack_guard(side: int):
    """A context for one LAPACK factorisation (LU, Cholesky, a symmetric eigensolver, an SVD) of a
    matrix whose smaller side is ``side``: nothing below :data:`LAPACK_SAFE_SIDE`, else one BLAS
    thread in every loaded BLAS for the call (:func:`_one_thread`) -- where threaded OpenBLAS faults.
    At such a side the call takes tens of seconds whatever the threads, so the limit's own cost (a
    few milliseconds) does not count."""
    return nullcontext() if side < LAPACK_SAFE_SIDE else _one_thread()


@contextmanager
def _one_thread() -> Iterator[None]:
    import scipy.linalg  # noqa: F401  (SciPy's own OpenBLAS loaded first, so that the limit reaches it)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def kernels() -> str:
    """What decides the last bits of this machine's floating-point results, in one line: the BLAS
    NumPy calls with the kernels it chose for this CPU (threadpoolctl's ``architecture``: OpenBLAS
    picks Haswell's on an AVX2 CPU, SkylakeX's on an AVX-512 one, and its ``OPENBLAS_CORETYPE``
    variable overrides the choice), and NumPy's version with the widest of its SIMD loop targets
    this CPU runs. Two machines with the same line compute the same bytes from the same inputs;
    with different lines, a product's rounding differs, and a result that takes a discrete choice
    after one (a clustering, an argmax, an optimiser's stopping step) may differ by much more."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    from threadpoolctl import threadpool_info

    blas = next(
        (
            f"{info.get('internal_api', '?')} {info.get('version') or '?'} {info.get('architecture') or '?'}"
            for info in threadpool_info()
            if info.get("user_api") == "blas"
        ),
        "no BLAS found",
    )
    simd = [target for target in __cpu_dispatch__ if __cpu_features__.get(target)]
    return f"{blas}; NumPy {np.__version__} {simd[-1] if simd else 'baseline'}"
