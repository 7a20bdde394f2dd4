"""Validation of our MIRT-2PL MAP fit against py-irt's variational ``multidim_2pl``.

The paper ("How benchmark prediction from fewer data misses the mark") runs P-IRT/GP-IRT
with tinyBenchmarks' IRT recipe: py-irt's ``multidim_2pl`` (10 dims, hierarchical priors,
2,000 SVI epochs at lr 0.1). :func:`benchcast.irt.fit_mirt_2pl` replaces it with a fast MAP
fit. This module holds the pure pieces of the comparison:

* :func:`make_mask` -- the held-out cells (a fixed random 10 % of the matrix); both fitters
  see only the other cells;
* :func:`heldout_log_likelihood` / :func:`heldout_accuracy` -- the out-of-sample fit of the
  point estimates on the held-out cells;
* :func:`compare_item_parameters` -- agreement of the two fits' parameters. The
  multidimensional embedding is identified only up to an invertible linear map of the
  ability space (``ability @ M``, ``disc @ inv(M).T``), an orthogonal one once the priors fix
  the scale, so discrimination is compared through rotation-invariant quantities: the
  per-item norm ``|disc_i|`` and the fitted logits of all (model, item) cells;
* :func:`validation_table`, :func:`comparison_table`, :func:`render_markdown` -- the report.

The py-irt half runs in its own venv (``workflow/scripts/irt_validation/pyirt_fit.py``; py-irt
pins pandas<3) and writes an ``.npz``; :func:`load_pyirt_npz` reads it back. Both fits are
expressed in one convention, ``logit = ability @ disc.T - dims * diff`` (that of
``benchcast.irt``), so ``diff`` is directly comparable (the intercept divided by ``dims``).

Caveat: the paper ran tinyBenchmarks' *modified* copy of py-irt, whose ``multidim_2pl`` has
exactly that logit (scalar ``diff`` per item, signed Normal ``disc``). The released py-irt
0.7.1 ``multidim_2pl`` is a different model -- ``sum_d disc[i,d] * (ability[j,d] -
diff[i,d])`` with LogNormal ``disc`` and a per-dimension ``diff`` -- so the py-irt script
offers both (``--variant paper`` / ``pyirt``) and converts either to the common convention.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import pearsonr, spearmanr

from benchcast.output.tables import to_markdown

__all__ = [
    "OURS",
    "PYIRT",
    "FIT_COLUMNS",
    "COMPARISON_COLUMNS",
    "make_mask",
    "logits",
    "heldout_log_likelihood",
    "heldout_accuracy",
    "compare_item_parameters",
    "validation_table",
    "comparison_table",
    "render_markdown",
    "load_pyirt_npz",
]

#: Fitter labels used in the tables.
OURS = "benchcast"
PYIRT = "py-irt"
FIT_COLUMNS = ["dataset", "n_models", "n_items", "fitter", "fit_seconds", "heldout_loglik", "heldout_accuracy"]
COMPARISON_COLUMNS = [
    "dataset",
    "speedup",
    "loglik_difference",
    "diff_pearson",
    "diff_spearman",
    "disc_norm_spearman",
    "logit_pearson",
]
_EPS = 1e-12


# --------------------------------------------------------------------------- mask


def make_mask(
    shape: tuple[int, int], fraction: float, rng: np.random.Generator, observed: np.ndarray | None = None
) -> np.ndarray:
    """Boolean ``(n_subjects, n_items)`` array of held-out cells (True = held out).

    Draws ``round(fraction * n_observed)`` observed cells uniformly without replacement, then
    returns one randomly chosen held-out cell to training in every row, and after that in
    every column, left without an observed training cell -- so every subject and every item
    keeps at least one training cell (needed to estimate its parameters). The repair can only
    lower the count, and at a 10 % fraction on benchmark-sized matrices it practically never
    acts. Deterministic given ``rng``'s state.

    ``observed`` (optional bool array of ``shape``): only observed cells are held out; rows or
    columns with no observed cell at all cannot be given a training cell and are left alone.
    """
    shape = (int(shape[0]), int(shape[1]))
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"fraction must be in [0, 1), got {fraction}")
    obs = np.ones(shape, bool) if observed is None else np.asarray(observed, bool)
    if obs.shape != shape:
        raise ValueError(f"observed has shape {obs.shape}, expected {shape}")
    candidates = np.flatnonzero(obs.ravel())
    k = int(round(fraction * candidates.size))
    mask = np.zeros(shape, bool)
    mask.ravel()[rng.choice(candidates, size=k, replace=False)] = True
    for axis in (1, 0):  # rows first, then columns
        train_count = (obs & ~mask).sum(axis=axis)
        for line in np.flatnonzero((train_count == 0) & (obs.sum(axis=axis) > 0)):
            cells = np.flatnonzero(mask[line] if axis == 1 else mask[:, line])
            pick = cells[rng.integers(cells.size)]
            if axis == 1:
                mask[line, pick] = False
            else:
                mask[pick, line] = False
    return mask


# --------------------------------------------------------------------------- fit quality


def logits(ability: np.ndarray, disc: np.ndarray, diff: np.ndarray) -> np.ndarray:
    """``(n_subjects, n_items)`` logits ``ability @ disc.T - dims * diff`` (py-irt/tinyBenchmarks)."""
    ability, disc, diff = (np.asarray(a, np.float64) for a in (ability, disc, diff))
    return ability @ disc.T - disc.shape[1] * diff.reshape(1, -1)


def _cells(Y: np.ndarray, P: np.ndarray, heldout: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    Y, P, heldout = np.asarray(Y, np.float64), np.asarray(P, np.float64), np.asarray(heldout, bool)
    if not (Y.shape == P.shape == heldout.shape):
        raise ValueError(f"shapes differ: Y {Y.shape}, P {P.shape}, heldout {heldout.shape}")
    cells = heldout & ~np.isnan(Y)
    if not cells.any():
        raise ValueError("no observed held-out cell")
    return Y[cells], P[cells]


def heldout_log_likelihood(Y: np.ndarray, P: np.ndarray, heldout: np.ndarray) -> float:
    """Mean Bernoulli log-likelihood ``y log p + (1 - y) log(1 - p)`` over the held-out cells.

    ``P`` = P(correct) of the point estimates, clipped to ``[1e-12, 1 - 1e-12]``; NaN cells
    of ``Y`` (unobserved) are skipped. Higher is better; 0 is perfect, ``log 0.5`` chance.
    """
    y, p = _cells(Y, P, heldout)
    p = np.clip(p, _EPS, 1.0 - _EPS)
    return float(np.mean(y * np.log(p) + (1.0 - y) * np.log1p(-p)))


def heldout_accuracy(Y: np.ndarray, P: np.ndarray, heldout: np.ndarray, threshold: float = 0.5) -> float:
    """Share of held-out cells where ``P >= threshold`` agrees with ``Y >= threshold``."""
    y, p = _cells(Y, P, heldout)
    return float(np.mean((p >= threshold) == (y >= threshold)))


# --------------------------------------------------------------------------- parameters


def _get(params, name: str):
    if isinstance(params, Mapping):  # dict, NpzFile
        return params[name] if name in params else None
    return getattr(params, name, None)


def _corr(fn, a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.ravel(a), np.ravel(b)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return float("nan")
    return float(fn(a[ok], b[ok])[0])


def compare_item_parameters(ours, theirs) -> dict[str, float]:
    """Agreement of two MIRT-2PL fits of the same matrix (same subjects and items, in order).

    ``ours`` / ``theirs``: anything with ``disc (n_items, dims)``, ``diff (n_items,)`` and
    ``ability (n_subjects, dims)`` as attributes or keys (``IRTParams``, a dict, an ``.npz``),
    both in the convention ``logit = ability @ disc.T - dims * diff``. ``dims`` may differ.

    Returns

    ``diff_pearson``, ``diff_spearman``
        item intercepts ``dims * diff`` (= ``diff`` when both use the same dims). Invariant
        to rotations of the embedding; a shift of the ability origin would move them by
        ``disc_i . c``, which the zero-centred ability priors pin down.
    ``disc_norm_pearson``, ``disc_norm_spearman``
        per-item ``|disc_i|`` (rotation invariant).
    ``logit_pearson``, ``logit_spearman``, ``prob_pearson``
        over all (subject, item) cells of the fitted logits / probabilities -- invariant to
        any reparameterisation that leaves the model's predictions unchanged.
    ``item_logit_pearson_median``
        median over items of the correlation across subjects of the item's logits.
    """
    out: dict[str, float] = {}
    disc_a, disc_b = np.asarray(_get(ours, "disc"), np.float64), np.asarray(_get(theirs, "disc"), np.float64)
    diff_a, diff_b = np.asarray(_get(ours, "diff"), np.float64), np.asarray(_get(theirs, "diff"), np.float64)
    if not disc_a.shape[0] == disc_b.shape[0] == diff_a.size == diff_b.size:
        raise ValueError(
            f"item counts differ: ours disc {disc_a.shape}, diff {diff_a.shape}; "
            f"theirs disc {disc_b.shape}, diff {diff_b.shape}"
        )
    icpt_a, icpt_b = disc_a.shape[1] * diff_a.ravel(), disc_b.shape[1] * diff_b.ravel()
    out["diff_pearson"] = _corr(pearsonr, icpt_a, icpt_b)
    out["diff_spearman"] = _corr(spearmanr, icpt_a, icpt_b)
    norm_a, norm_b = np.linalg.norm(disc_a, axis=1), np.linalg.norm(disc_b, axis=1)
    out["disc_norm_pearson"] = _corr(pearsonr, norm_a, norm_b)
    out["disc_norm_spearman"] = _corr(spearmanr, norm_a, norm_b)
    ab_a, ab_b = _get(ours, "ability"), _get(theirs, "ability")
    nan = float("nan")
    if ab_a is None or ab_b is None or np.shape(ab_a)[0] != np.shape(ab_b)[0]:
        out.update(logit_pearson=nan, logit_spearman=nan, prob_pearson=nan, item_logit_pearson_median=nan)
        return out
    la, lb = logits(ab_a, disc_a, diff_a), logits(ab_b, disc_b, diff_b)
    out["logit_pearson"] = _corr(pearsonr, la, lb)
    out["logit_spearman"] = _corr(spearmanr, la, lb)
    out["prob_pearson"] = _corr(pearsonr, expit(la), expit(lb))
    ca, cb = la - la.mean(axis=0), lb - lb.mean(axis=0)
    denom = np.sqrt((ca**2).sum(axis=0) * (cb**2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        per_item = (ca * cb).sum(axis=0) / denom
    per_item = per_item[np.isfinite(per_item) & (denom > 0)]
    out["item_logit_pearson_median"] = float(np.median(per_item)) if per_item.size else nan
    return out


# --------------------------------------------------------------------------- tables


def validation_table(rows: list[dict]) -> pd.DataFrame:
    """One row per (dataset, fitter): :data:`FIT_COLUMNS` first, then any extra keys of ``rows``.

    Each row dict needs every key of :data:`FIT_COLUMNS` (extra keys such as ``threads`` or
    ``settings`` are kept as further columns). Sorted by dataset, then ours before py-irt.
    """
    if not rows:
        return pd.DataFrame(columns=FIT_COLUMNS)
    df = pd.DataFrame(rows)
    missing = [c for c in FIT_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"validation rows lack {missing}")
    if df.duplicated(["dataset", "fitter"]).any():
        raise ValueError("more than one row for some (dataset, fitter)")
    rank = {OURS: 0, PYIRT: 1}
    df = df.assign(_r=df["fitter"].map(lambda f: rank.get(f, 2))).sort_values(["dataset", "_r", "fitter"])
    extra = [c for c in df.columns if c not in FIT_COLUMNS and c != "_r"]
    return df[FIT_COLUMNS + extra].reset_index(drop=True)


def comparison_table(
    fits: pd.DataFrame, correlations: Mapping[str, Mapping[str, float]], ours: str = OURS, theirs: str = PYIRT
) -> pd.DataFrame:
    """One row per dataset with both fits: :data:`COMPARISON_COLUMNS`.

    ``fits`` = :func:`validation_table`; ``correlations[dataset]`` =
    :func:`compare_item_parameters` (ours, theirs). ``speedup`` = theirs' fit seconds / ours';
    ``loglik_difference`` = ours' held-out log-likelihood minus theirs' (> 0: ours fits the
    held-out cells better).
    """
    out = []
    for dataset, g in fits.groupby("dataset", sort=False):
        a, b = g[g.fitter == ours], g[g.fitter == theirs]
        if a.empty or b.empty:
            continue
        a, b = a.iloc[0], b.iloc[0]
        corr = correlations.get(dataset, {})
        out.append(
            {
                "dataset": dataset,
                "speedup": float(b.fit_seconds) / float(a.fit_seconds) if a.fit_seconds > 0 else float("nan"),
                "loglik_difference": float(a.heldout_loglik) - float(b.heldout_loglik),
                **{c: float(corr.get(c, float("nan"))) for c in COMPARISON_COLUMNS[3:]},
            }
        )
    return pd.DataFrame(out, columns=COMPARISON_COLUMNS)


def render_markdown(
    fits: pd.DataFrame,
    comparison: pd.DataFrame,
    *,
    settings: Mapping[str, object] | None = None,
    title: str = "IRT validation: benchcast MIRT-2PL (MAP) vs py-irt multidim_2pl",
) -> str:
    """A short Markdown report: settings, the per-fit table and the comparison table."""
    lines = [f"# {title}", ""]
    if settings:
        lines += [f"- **{k}**: {v}" for k, v in settings.items()] + [""]
    lines += [
        "## Fits",
        "",
        "Held-out log-likelihood: mean Bernoulli log-likelihood of the point estimates on the masked "
        "cells (higher is better; chance = -0.693). Accuracy thresholds P(correct) at 0.5.",
        "",
        to_markdown(fits, digits=4),
        "## Agreement (ours vs py-irt)",
        "",
        "speedup = py-irt seconds / ours; loglik_difference = ours - py-irt (> 0: ours better). "
        "Correlations over items (difficulty = intercept, |disc| per item) and over all cells "
        "(logits); the disc comparisons are rotation invariant.",
        "",
        to_markdown(comparison, digits=3),
    ]
    return "\n".join(lines)


def load_pyirt_npz(path: str | Path) -> dict[str, object]:
    """Read an ``pyirt_fit.py`` output: arrays as arrays, 0-d values as Python scalars."""
    with np.load(path, allow_pickle=False) as z:
        return {k: (z[k].item() if z[k].ndim == 0 else z[k]) for k in z.files}
