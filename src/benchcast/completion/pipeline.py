"""Transform -> standardize -> complete -> invert, as one call (BenchPress Section 4.2 (i)-(iv))."""

from __future__ import annotations

import numpy as np

from benchcast.completion.completers import complete, get_completer
from benchcast.completion.transforms import Standardized, get_transform, standardize, unstandardize

__all__ = ["predict_scores"]


def predict_scores(
    M_train: np.ndarray,
    transform: str,
    method: str,
    params: dict | None = None,
    is_percentage: np.ndarray | None = None,
) -> np.ndarray:
    """Complete a models x benchmarks score matrix on the original score scale.

    Parameters
    ----------
    M_train : (M, B) array of scores, NaN = missing.
    transform, method : names from :data:`~benchcast.completion.transforms.TRANSFORMS` and
        :data:`~benchcast.completion.completers.COMPLETERS`.
    params : the method's hyper-parameters.
    is_percentage : per-column percentage flags; default: the observed-range rule.

    Returns
    -------
    (M, B) array: observed cells unchanged, missing cells predicted (NaN where the method
    gives no prediction), percentage columns clipped to [0, 100].
    """
    get_transform(transform)
    get_completer(method)
    st: Standardized = standardize(M_train, transform, is_percentage)
    Z_hat = complete(method, st.z, **(params or {}))
    return unstandardize(st, Z_hat)
