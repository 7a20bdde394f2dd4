"""BenchPress's default score predictor for many masked matrices at once (Sections 5 and 6).

Every Section 5 / 6.1 analysis refits the default predictor (Logit Bias ALS, rank 2, lambda 0.1;
:data:`benchcast.studies.benchpress.settings.DEFAULT_PREDICTOR`) on many masked copies of the matrix;
:func:`predict_default_batch` fits them a chunk at a time. Functions that fit take a
``predict_batch`` of type :data:`PredictBatch`, so tests inject cheap stand-ins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from benchcast.completion.completers import bias_als_batch
from benchcast.completion.transforms import standardize, unstandardize
from benchcast.studies.benchpress.settings import DEFAULT_PREDICTOR

PredictBatch = Callable[[np.ndarray], np.ndarray]
"""``(K, M, B)`` training matrices (NaN = missing) -> ``(K, M, B)`` completed score matrices."""


def predict_default_batch(
    Ms: np.ndarray | Sequence[np.ndarray], chunk_size: int = 4, transform: str | None = None, params: dict | None = None
) -> np.ndarray:
    """The default BenchPress predictor on a stack of differently-masked matrices.

    Each matrix is standardized on *its own* observed cells (the percentage-column rule and
    the column means / stds depend on the training matrix, exactly as in
    :func:`~benchcast.completion.pipeline.predict_scores`); the standardized matrices are
    fitted ``chunk_size`` at a time, then each is mapped back to scores.

    The fit is :func:`~benchcast.completion.completers.bias_als_batch` (identical to one
    ``predict_scores(M_k, "logit", "bias_als", {"rank": 2, "lam": 0.1})`` per matrix).
    ``chunk_size`` only trades speed for memory; 4 was the fastest of the sizes timed on the
    84 x 133 matrix.

    Parameters
    ----------
    Ms : (K, M, B) array or sequence of (M, B) arrays, NaN = missing.
    chunk_size : matrices per solver call.
    transform, params : override the default's ``"logit"`` and ``{"rank": 2, "lam": 0.1}``.

    Returns
    -------
    (K, M, B) array: observed cells unchanged, missing cells predicted (NaN where no
    prediction: a column without training observations).
    """
    Ms = np.asarray(Ms, dtype=np.float64)
    if Ms.ndim == 2:
        Ms = Ms[None]
    if Ms.ndim != 3:
        raise ValueError(f"expected a (K, M, B) stack of matrices, got shape {Ms.shape}")
    if DEFAULT_PREDICTOR["method"] != "bias_als":
        raise RuntimeError("predict_default_batch assumes the default predictor is Bias ALS")
    transform = transform or DEFAULT_PREDICTOR["transform"]
    params = dict(DEFAULT_PREDICTOR["params"] if params is None else params)
    chunk_size = max(1, int(chunk_size))
    out = np.empty_like(Ms)
    for start in range(0, len(Ms), chunk_size):
        sts = [standardize(M, transform) for M in Ms[start : start + chunk_size]]
        Z_hat = bias_als_batch(np.stack([st.z for st in sts]), **params)
        for k, st in enumerate(sts):
            out[start + k] = unstandardize(st, Z_hat[k])
    return out
