"""Lasso with sparsity equal to the budget ("misses the mark", eqs. 16-17)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from benchcast.errors import ConfigError
from benchcast.methods.base import UNIT, Method, Progress, check_budget, register
from benchcast.methods.prefit import Prefit, register_prefit


def lasso_path(*args, **kwargs):
    """``sklearn.linear_model.lasso_path``, imported on first use: scikit-learn takes ~1 s to
    import, and every workflow job imports this module through the method registry."""
    from sklearn.linear_model import lasso_path as _lasso_path

    return _lasso_path(*args, **kwargs)


@cache
def _early_exit() -> bool:
    """scikit-learn >= 1.9's ``cd_fast.enet_coordinate_descent`` returns ``w`` untouched when the
    duality gap at the warm start is already <= tol (older versions always run one sweep)."""
    import sklearn

    try:
        return tuple(int(p) for p in sklearn.__version__.split(".")[:2]) >= (1, 9)
    except ValueError:
        return False


@dataclass
class LassoSelection:
    """One budget's pick from a Lasso path: the core set, its weights and the intercept."""

    alpha: float
    coreset: np.ndarray  # item indices with non-zero weight (ascending)
    coef: np.ndarray  # their weights
    intercept: float
    n_items: int  # items of the source matrix the path was fitted on


_GAP_MARGIN = 1e-12  # relative safety margin of the skip test (see lasso_path_skipping)


def lasso_path_skipping(
    X: np.ndarray, y: np.ndarray, alphas_desc: np.ndarray, max_iter: int, tol: float, max_nnz: int | None = None
) -> np.ndarray:
    """``lasso_path(X, y, alphas=alphas_desc, max_iter=max_iter, tol=tol)[1]``, bit for bit, faster.

    Along the path scikit-learn calls its coordinate-descent kernel once per alpha, warm
    started from the previous solution ``w``; the kernel first recomputes ``R = y - X w``,
    ``X^T R`` and the duality gap at ``w`` and returns ``w`` unchanged if the gap is
    ``<= tol * ||y||^2``. On the "misses the mark" grids that happens for ~90 % of the 1,000
    alphas, and those calls cost three passes over ``X`` each. The gap at ``w`` depends on
    alpha only through scalars (``||R||^2``, ``R.y``, ``||X^T R||_inf``, ``||w||_1``), so
    they are computed once per kernel call with the same BLAS routines (SciPy's, which
    scikit-learn's kernel calls), the gap is evaluated for all remaining alphas at once, and
    the leading run of alphas whose gap is below the kernel's threshold by a relative margin
    of 1e-12 is skipped -- their columns are ``w`` (the margin makes sure a last-bit
    difference in the scalars can never skip an alpha the kernel would have iterated on).
    Every other alpha is one ``lasso_path`` call from the warm start: the same kernel call
    with the same arguments as inside the full path. Requires X Fortran-ordered float64 and
    ``n_samples <= n_features`` (else scikit-learn's ``precompute="auto"`` uses the Gram
    matrix; the caller then uses ``lasso_path`` directly).

    ``max_nnz``: stop after the first alpha whose solution has more than ``max_nnz`` non-zero
    weights; the columns returned are then the path's first ones (the same bits), up to and
    including that alpha.
    """
    # imported here: every job loads this module through the method registry, and SciPy's
    # import costs 0.1 s that only Lasso (and PCA) jobs need
    from scipy.linalg.blas import dasum, ddot, dgemv

    n_samples, n_features = X.shape
    alphas_desc = np.sort(np.asarray(alphas_desc, dtype=np.float64))[::-1]  # as lasso_path orders them
    n_alphas = len(alphas_desc)
    a_all = alphas_desc * 1.0 * n_samples  # the kernel's l1 penalties (l1_ratio = 1)
    rows = np.empty((n_alphas, n_features))  # row i = coefficients at alphas_desc[i]
    w = np.zeros(n_features)
    tol_scaled = tol * ddot(y, y)
    i = 0
    while i < n_alphas:
        # the kernel's gap_enet at w, for every remaining alpha at once (same IEEE operations)
        R = dgemv(-1.0, X, w, beta=1.0, y=y)  # y - X w
        XtA = dgemv(1.0, X, R, beta=-0.0, y=w, trans=1)  # X^T R - 0 * w
        r_norm2, ry, dual_norm, w_l1 = ddot(R, R), ddot(R, y), float(np.abs(XtA).max()), dasum(w)
        a = a_all[i:]
        primal = 0.5 * r_norm2 + a * w_l1
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(dual_norm > a, a / dual_norm, 1.0)
        dual = -0.5 * (scale * scale) * r_norm2 + scale * ry
        gap = primal - dual
        ok = np.isfinite(gap) & (gap <= tol_scaled - _GAP_MARGIN * (np.abs(primal) + np.abs(dual) + tol_scaled))
        n_skip = int(np.argmin(ok)) if not ok.all() else len(ok)
        rows[i : i + n_skip] = w  # the kernel would return w unchanged
        i += n_skip
        if i < n_alphas:  # run the kernel from the warm start
            _, c, _ = lasso_path(
                X,
                y,
                alphas=[float(alphas_desc[i])],
                coef_init=w.copy(),
                precompute=False,
                check_input=False,
                max_iter=max_iter,
                tol=tol,
            )
            w = np.ascontiguousarray(c[:, 0], dtype=np.float64)
            rows[i] = w
            i += 1
            if max_nnz is not None and np.count_nonzero(w) > max_nnz:
                return rows[:i].T
    return rows.T


@register("lasso")
class LassoMethod(Method):
    """Lasso from all item scores to the full mean, with at most ``n`` non-zero weights.

    Follows the paper's code: over ``alphas = logspace(-4, 1, 1000)`` (ascending) keep the
    fit whose number of non-zero weights is ``<= n`` and closest to ``n``, stopping at the
    first exact match; the items with non-zero weight are the core set. The whole path is
    ``sklearn.linear_model.lasso_path``'s (coordinate descent, warm starts), on centered
    data: the same model as ``Lasso(alpha, fit_intercept=True)``; it is computed by
    :func:`lasso_path_skipping`, bit-identical to ``lasso_path`` but skipping the ~90 % of
    alphas at which the solver would return its warm start unchanged.
    ``max_iter`` and ``tol`` are scikit-learn's coordinate-descent settings (paper code:
    ``max_iter=10000``, default tol).

    ``stop_ratio`` (default None: the paper's whole path) is an approximation for whole
    leaderboards: the path, computed from the largest alpha down, stops at the first alpha whose
    fit has more than ``stop_ratio x budget`` non-zero weights, and only the alphas down to it are
    candidates. Below it the solver's cost grows with the active set (at 1,000 x 10,000, 96 % of
    the path's time is spent at alphas with more than 100 non-zero weights), while the rule above
    picks from there only if the count comes back down to the budget. Its measured effect on the
    "misses the mark" grids is in docs/scaling.md.
    """

    scores = UNIT

    deterministic_fit = True
    needs_prefit = "lasso"

    def __init__(
        self,
        alpha_min: float = 1e-4,
        alpha_max: float = 10.0,
        n_alphas: int = 1000,
        max_iter: int = 10_000,
        tol: float = 1e-4,
        stop_ratio: float | None = None,
    ):
        self.alpha_min, self.alpha_max, self.n_alphas = float(alpha_min), float(alpha_max), int(n_alphas)
        self.max_iter, self.tol = int(max_iter), float(tol)
        if stop_ratio is not None and (
            isinstance(stop_ratio, bool) or not isinstance(stop_ratio, (int, float)) or stop_ratio < 1
        ):
            raise ConfigError(
                f"lasso: stop_ratio must be a number >= 1 (or null for the whole path), got {stop_ratio!r}. "
                "Fix: set it to e.g. 2, or leave it out"
            )
        self.stop_ratio = None if stop_ratio is None else float(stop_ratio)

    def params(self):
        p = {
            "alpha_min": self.alpha_min,
            "alpha_max": self.alpha_max,
            "n_alphas": self.n_alphas,
            "max_iter": self.max_iter,
            "tol": self.tol,
        }
        if self.stop_ratio is not None:  # absent when unset: the whole path's ids and stored fits stay as they were
            p["stop_ratio"] = self.stop_ratio
        return p

    def max_nnz(self, budget: int) -> int | None:
        """The most non-zero weights before the path stops for ``budget`` (None: never stops)."""
        return None if self.stop_ratio is None else int(np.floor(self.stop_ratio * budget))

    def fit(self, source, budget, rng, prefit: dict[int, LassoSelection] | None = None):
        """Select the core set for ``budget`` from the regularisation path of ``source``.

        ``prefit`` (:class:`LassoPrefit`, the workflow's ``mtm_prefit`` job): this trial's selections for every
        configured budget, from one path (:func:`lasso_selections`); the path does not
        depend on the budget, so the three budgets' jobs need not each recompute it."""
        check_budget(source, budget)
        if prefit is None:
            prefit = lasso_selections(source, [budget], self)
        elif budget not in prefit:
            raise ConfigError(
                f"lasso: the precomputed path selections cover budgets {sorted(prefit)}, not {budget}. "
                "Fix: rerun the mtm_prefit job with this budget in misses_the_mark.budgets"
            )
        sel = prefit[budget]
        if sel.n_items != source.shape[1]:
            raise ValueError(f"lasso: precomputed selection is over {sel.n_items} items, source has {source.shape[1]}")
        self.alpha_, self.coreset_, self.coef_, self.intercept_ = sel.alpha, sel.coreset, sel.coef, sel.intercept
        return self

    def path(self, source: np.ndarray, max_nnz: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """``(coefs, alphas, x_mean, y_mean)``: the path's coefficients (items x alphas) in
        ascending alpha order, as the paper loops over them. ``max_nnz``: only the largest
        alphas, down to the first whose fit has more than ``max_nnz`` non-zero weights."""
        y = source.mean(axis=1)
        x_mean, y_mean = source.mean(axis=0), y.mean()
        Xc = np.asfortranarray(source - x_mean)
        alphas_desc = np.logspace(np.log10(self.alpha_max), np.log10(self.alpha_min), self.n_alphas)
        yc = np.ascontiguousarray(y - y_mean, dtype=np.float64)
        n_samples, n_features = Xc.shape
        if _early_exit() and Xc.dtype == np.float64 and n_samples <= n_features and len(alphas_desc) > 1:
            coefs = lasso_path_skipping(Xc, yc, alphas_desc, self.max_iter, self.tol, max_nnz)
        else:
            _, coefs, _ = lasso_path(Xc, yc, alphas=alphas_desc, max_iter=self.max_iter, tol=self.tol)
            over = np.flatnonzero((coefs != 0).sum(axis=0) > max_nnz) if max_nnz is not None else []
            if len(over):
                coefs = coefs[:, : over[0] + 1]
        return coefs[:, ::-1], alphas_desc[: coefs.shape[1]][::-1], x_mean, float(y_mean)

    def select(
        self, coefs: np.ndarray, alphas: np.ndarray, x_mean: np.ndarray, y_mean: float, budget: int
    ) -> LassoSelection:
        """The paper's rule on an ascending path: the first alpha with exactly ``budget``
        non-zero weights, else the one with the most non-zero weights below ``budget``; with
        ``stop_ratio``, among the alphas down to the first with more than ``max_nnz(budget)``
        (so a budget's pick does not depend on the other budgets of one path)."""
        nnz = (coefs != 0).sum(axis=0)
        ok = nnz <= budget
        cap = self.max_nnz(budget)
        if cap is not None:
            over = np.flatnonzero(nnz[::-1] > cap)  # from the largest alpha down
            if over.size:
                ok[: len(nnz) - 1 - over[0]] = False
        if not ok.any():
            raise ConfigError(
                f"lasso: no alpha in [{self.alpha_min}, {self.alpha_max}] gives <= {budget} non-zero "
                "weights. Fix: raise the method's alpha_max"
            )
        diff = np.where(ok, budget - nnz, np.iinfo(np.int64).max)
        exact = np.flatnonzero(diff == 0)
        k = int(exact[0]) if exact.size else int(np.argmin(diff))
        coef = coefs[:, k]
        coreset = np.flatnonzero(coef != 0)
        return LassoSelection(
            alpha=float(alphas[k]),
            coreset=coreset,
            coef=coef[coreset],
            intercept=float(y_mean - x_mean @ coef),
            n_items=coefs.shape[0],
        )

    def estimate(self, oracle, rng):
        if self.coreset_.size == 0:
            return np.full(oracle.n_targets, self.intercept_)
        return oracle.query(self.coreset_) @ self.coef_ + self.intercept_


def lasso_selections(source: np.ndarray, budgets, method: LassoMethod | None = None) -> dict[int, LassoSelection]:
    """Every budget's selection from one Lasso path of ``source`` (``method``'s settings)."""
    method = method or LassoMethod()
    for b in budgets:
        check_budget(source, b)
    path = method.path(source, method.max_nnz(max(int(b) for b in budgets)))
    return {int(b): method.select(*path, int(b)) for b in budgets}


def lasso_trials(
    scores: np.ndarray,
    by_trial: dict[int, tuple[np.ndarray, np.ndarray]],
    budgets,
    params: dict | None = None,
    log=lambda s: None,
):
    """:class:`LassoPrefit`'s fit: every trial's selections for all ``budgets`` from one
    path per trial. Trials with the same source models (every extrapolation trial) share the
    path of the first (the fit is deterministic). Returns ``(selections, timing)``:
    ``selections[trial][budget]`` and a table (trial, fit_seconds, shared_from) whose
    ``fit_seconds`` repeats a shared path's seconds on every trial that uses it."""
    import time

    import pandas as pd

    method = LassoMethod(**(params or {}))
    progress = Progress(len(by_trial), log, "lasso path")
    selections, seconds, rows, made_by = {}, {}, [], {}
    for k, (trial, (src, _)) in enumerate(sorted(by_trial.items())):
        key = np.asarray(src).tobytes()
        if key not in made_by:
            t0 = time.perf_counter()
            selections[trial] = lasso_selections(scores[src], budgets, method)
            seconds[trial] = time.perf_counter() - t0
            made_by[key] = trial
        first = made_by[key]
        selections[trial] = selections[first]
        rows.append((trial, seconds[first], first))
        progress(k + 1)
    timing = pd.DataFrame(rows, columns=["trial", "fit_seconds", "shared_from"]).astype(
        {"trial": np.int32, "shared_from": np.int32}
    )
    return selections, timing


def selections_to_frames(selections: dict[int, dict[int, LassoSelection]]):
    """Per-trial selections as two tidy tables: ``fits`` (trial, budget, alpha, intercept,
    n_items) and ``items`` (trial, budget, item_idx, coef)."""
    import pandas as pd

    fits, items = [], []
    for t, by_budget in sorted(selections.items()):
        for b, sel in sorted(by_budget.items()):
            fits.append((t, b, sel.alpha, sel.intercept, sel.n_items))
            items.append(
                pd.DataFrame(
                    {
                        "trial": np.int32(t),
                        "budget": np.int32(b),
                        "item_idx": sel.coreset.astype(np.int32),
                        "coef": sel.coef,
                    }
                )
            )
    fits = pd.DataFrame(fits, columns=["trial", "budget", "alpha", "intercept", "n_items"]).astype(
        {"trial": np.int32, "budget": np.int32, "n_items": np.int32}
    )
    return fits, pd.concat(items, ignore_index=True)


def frames_to_selections(fits, items) -> dict[int, dict[int, LassoSelection]]:
    """Inverse of :func:`selections_to_frames`."""
    groups = {key: g for key, g in items.groupby(["trial", "budget"], sort=False)}
    out: dict[int, dict[int, LassoSelection]] = {}
    for row in fits.itertuples(index=False):
        g = groups.get((row.trial, row.budget))
        if g is None:
            coreset, coef = np.zeros(0, dtype=np.int64), np.zeros(0)
        else:
            g = g.sort_values("item_idx")
            coreset, coef = g["item_idx"].to_numpy(np.int64), g["coef"].to_numpy(np.float64)
        out.setdefault(int(row.trial), {})[int(row.budget)] = LassoSelection(
            alpha=float(row.alpha), coreset=coreset, coef=coef, intercept=float(row.intercept), n_items=int(row.n_items)
        )
    return out


@register_prefit
class LassoPrefit(Prefit):
    """One regularisation path per trial, yielding every budget's core set (``settings``: the
    Lasso configuration's parameters)."""

    kind = "lasso"

    def fit_trials(self, scores, by_trial, settings, budgets, base_seed, log, only=None):
        if only is not None:  # paths share across trials; not splittable (run_prefit refuses a part)
            raise ValueError("a Lasso prefit cannot be split into parts")
        log(f"Lasso paths of {len(by_trial)} trials for budgets {list(budgets)}, params={dict(settings)}")
        selections, timing = lasso_trials(scores, by_trial, [int(b) for b in budgets], dict(settings), log=log)
        made = timing.shared_from == timing.trial
        log(f"{int(made.sum())} distinct paths, {timing.fit_seconds[made].sum():.1f}s")
        return selections, timing

    def to_tables(self, fits):
        tables, items = selections_to_frames(fits)
        return {"fits": tables, "items": items}

    def from_tables(self, tables):
        return frames_to_selections(tables["fits"], tables["items"])
