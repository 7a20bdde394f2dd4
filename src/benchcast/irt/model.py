"""The multidimensional 2PL's shared pieces: fitted parameters, input checks, response curves.

:class:`IRTParams` (what both fitters return), the sigmoid :func:`expit`, the input
validation shared by the fitters (:mod:`benchcast.irt.map_fit`, :mod:`benchcast.irt.svi_fit`)
and by the curves, tinyBenchmarks' response curve :func:`response_probabilities`
(``item_curve``) and the mean Bernoulli :func:`log_likelihood`. The model, ``logit =
ability @ disc.T - dims * diff``, and its ``dims * diff`` convention are described in
:mod:`benchcast.irt`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchcast.data.item_level import is_binary
from benchcast.errors import DataError

__all__ = ["LOGIT_CLIP", "IRTParams", "expit", "log_likelihood", "response_probabilities"]

#: tinyBenchmarks' ``item_curve`` clips every per-dimension term ``a_d * theta_d - b`` to this.
LOGIT_CLIP = 30.0


def expit(z: np.ndarray) -> np.ndarray:
    """``scipy.special.expit``, imported on first use: every workflow job loads this module
    through the method registry, and importing ``scipy.special`` costs it ~0.1 s."""
    from scipy.special import expit as _expit

    return _expit(z)


@dataclass
class IRTParams:
    """A fitted multidimensional 2PL: ``logit = ability @ disc.T - dims * diff``."""

    disc: np.ndarray  # (n_items, dims) float64
    diff: np.ndarray  # (n_items,) float64, py-irt convention (logit uses dims * diff)
    ability: np.ndarray  # (n_subjects, dims)
    n_iter: int
    converged: bool
    neg_log_posterior: float  # of the MAP (before the output re-gauging), without normalising constants

    @property
    def dims(self) -> int:
        return int(self.disc.shape[1])

    def item_embedding(self) -> np.ndarray:
        """``(n_items, dims + 1)`` = ``[disc, diff]``: tinyBenchmarks' item features for k-means."""
        return np.column_stack([self.disc, self.diff])


# --------------------------------------------------------------------------- validation


def _bad(field: str, problem: str, fix: str) -> DataError:
    return DataError(None, field, problem, fix)


def _check_binary(y: np.ndarray, field: str) -> None:
    if not np.all(np.isfinite(y)):
        raise _bad(
            field,
            "NaN or infinite value in an observed cell",
            "mark missing responses as unobserved (observed=False) or drop them",
        )
    if not is_binary(y):
        bad = np.unique(y[(y != 0) & (y != 1)])[:5]
        raise _bad(
            field,
            f"responses must be binary 0/1; found values such as {bad.tolist()}",
            "binarise the scores (the 2PL models correct/incorrect responses)",
        )


def _as_mask(observed, shape: tuple[int, ...]) -> np.ndarray:
    if observed is None:
        return np.ones(shape, dtype=bool)
    m = np.asarray(observed)
    if m.shape != shape:
        raise _bad(
            "observed",
            f"mask shape {m.shape} differs from the responses' shape {shape}",
            "pass a boolean mask with one entry per response cell",
        )
    if m.dtype != bool:
        if not np.all((m == 0) | (m == 1)):
            raise _bad("observed", "mask must be boolean (or 0/1)", "pass a boolean mask")
        m = m.astype(bool)
    return m


def _check_scale(name: str, value: float) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise _bad(
            name, f"prior scale must be a finite positive number, got {value!r}", "pass a positive standard deviation"
        )
    return v


#: the fitters' ``dtype`` values: the precision of the (subjects x items) work
DTYPES = {"float64": np.float64, "float32": np.float32}


def _check_dtype(dtype, fix: str):
    """The numpy type a fitter's ``dtype`` names; a DataError naming the choices otherwise."""
    if not (isinstance(dtype, str) and dtype in DTYPES):
        raise _bad("dtype", f"must be one of {', '.join(map(repr, DTYPES))}, got {dtype!r}", fix)
    return DTYPES[dtype]


def _checked_responses(responses, observed, dims) -> tuple[np.ndarray, np.ndarray, int]:
    """Validated ``(Y, mask, dims)`` for the IRT fitters: a non-empty 2-D float matrix, a
    boolean mask of observed cells, binary observed responses and an integer ``dims >= 1``."""
    Y = np.asarray(responses, dtype=np.float64)
    if Y.ndim != 2:
        raise _bad(
            "responses",
            f"expected a 2-D (subjects x items) array, got shape {Y.shape}",
            "pass the response matrix with one row per model",
        )
    if isinstance(dims, (bool, np.bool_)) or not isinstance(dims, (int, np.integer)) or dims < 1:
        raise _bad("dims", f"dims must be an integer >= 1, got {dims!r}", "use e.g. dims=10")
    if Y.shape[0] < 1 or Y.shape[1] < 1:
        raise _bad("responses", f"empty response matrix {Y.shape}", "pass at least one subject and item")
    mask = _as_mask(observed, Y.shape)
    _check_binary(Y[mask], "responses")
    return Y, mask, int(dims)


# --------------------------------------------------------------------------- curves


def _check_item_params(disc, diff) -> tuple[np.ndarray, np.ndarray]:
    disc = np.asarray(disc, dtype=np.float64)
    diff = np.asarray(diff, dtype=np.float64)
    if disc.ndim != 2:
        raise _bad("disc", f"expected (n_items, dims), got shape {disc.shape}", "pass IRTParams.disc")
    if diff.shape != (disc.shape[0],):
        raise _bad(
            "diff",
            f"expected shape ({disc.shape[0]},) to match disc {disc.shape}, got {diff.shape}",
            "pass IRTParams.diff for the same items as disc",
        )
    return disc, diff


def response_probabilities(ability: np.ndarray, disc: np.ndarray, diff: np.ndarray) -> np.ndarray:
    """``(n_subjects, n_items)`` P(correct) = tinyBenchmarks' ``item_curve`` (Polo et al. 2024).

    ``sigmoid(sum_d clip(disc[i, d] * ability[j, d] - diff[i], -30, 30))``: the clip is per
    dimension term, exactly as ``item_curve``; it only acts where some term exceeds 30 in
    absolute value, which we detect with a per-item bound and compute exactly for those
    items (in chunks), so the common case is one matrix product. A 1-D ``ability`` is one
    subject (result shape ``(1, n_items)``).
    """
    disc, diff = _check_item_params(disc, diff)
    th = np.atleast_2d(np.asarray(ability, dtype=np.float64))
    if th.ndim != 2 or th.shape[1] != disc.shape[1]:
        raise _bad(
            "ability",
            f"expected (n_subjects, {disc.shape[1]}), got shape {np.shape(ability)}",
            "pass abilities with the same dims as disc",
        )
    dims = disc.shape[1]
    z = th @ disc.T - dims * diff
    if th.shape[0] and disc.shape[0]:
        bound = (np.abs(disc) * np.abs(th).max(axis=0)).max(axis=1) + np.abs(diff)
        hit = np.flatnonzero(bound > LOGIT_CLIP)
        if hit.size:
            step = max(1, 2_000_000 // max(1, th.shape[0] * dims))
            for s in range(0, hit.size, step):
                idx = hit[s : s + step]
                terms = th[:, None, :] * disc[None, idx, :] - diff[None, idx, None]
                z[:, idx] = np.clip(terms, -LOGIT_CLIP, LOGIT_CLIP).sum(axis=2)
    return expit(z)


def log_likelihood(responses, probabilities, observed=None) -> float:
    """Mean Bernoulli log-likelihood of binary ``responses`` under ``probabilities`` over the
    observed cells. Probabilities are clipped to ``[1e-12, 1 - 1e-12]`` (ours) so one
    confidently wrong cell is a large finite penalty rather than ``-inf``."""
    Y = np.asarray(responses, dtype=np.float64)
    P = np.asarray(probabilities, dtype=np.float64)
    if Y.shape != P.shape:
        raise _bad(
            "probabilities",
            f"shape {P.shape} differs from the responses' {Y.shape}",
            "pass one probability per response",
        )
    mask = _as_mask(observed, Y.shape)
    y, p = Y[mask], np.clip(P[mask], 1e-12, 1.0 - 1e-12)
    if y.size == 0:
        raise _bad("observed", "no observed cell", "observe at least one response")
    _check_binary(y, "responses")
    if not np.all(np.isfinite(p)):
        raise _bad("probabilities", "NaN probability in an observed cell", "check the fitted parameters")
    return float(np.mean(y * np.log(p) + (1.0 - y) * np.log1p(-p)))
