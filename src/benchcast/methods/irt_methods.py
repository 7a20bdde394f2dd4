"""P-IRT and GP-IRT ("misses the mark", App. A.2 eqs. 12-13; Polo et al. 2024, tinyBenchmarks).

Both methods share one multidimensional 2PL IRT fit of the source models per trial
(:func:`fit_trial_irt`): the workflow fits it once per (dataset, split, trial) in its own
cached job and hands it to every budget and to both methods (``prefit``); called without a
prefit, a method fits the IRT itself, so the library works the same outside the workflow.

The recipe follows the paper's code (its ``benchpred/tiny_bench.py``, adapted from
tinyBenchmarks):

* **IRT**: ``multidim_2pl`` with 10 dimensions on the source models' binary responses. The
  paper fitted it with py-irt (hierarchical priors, 2,000 SVI epochs); we fit the same model
  by MAP (:func:`benchcast.irt.fit_mirt_2pl`), validated against py-irt in the IRT
  validation report.
* **Core set** ("anchor points" in IRT space): k-means with ``n`` clusters on the item
  embeddings ``[disc, diff]`` (scikit-learn ``KMeans(n_init="auto")``), each cluster
  represented by the item nearest its centre; the anchor weights are the cluster sizes / N.
  Two centres may share a nearest item, so the core set can have fewer than ``n`` distinct
  items -- kept, as in the code (the budget is an upper bound).
* **P-IRT** (eq. 12): the target's ability is the maximum-likelihood estimate from its
  anchor responses (tinyBenchmarks' ``estimate_ability_parameters``); then
  ``h = (n/N) mean_C s + (1 - n/N) mean_{D \\ C} P(correct | ability)``.
* **GP-IRT** (eq. 13): ``h = lambda h_AnchorWeighted + (1 - lambda) h_P-IRT`` with the
  anchors' cluster weights, and ``lambda = b^2 / (v + b^2)`` (tinyBenchmarks): ``b`` is
  P-IRT's held-out error -- an IRT refit without every fifth source model, whose abilities
  are then estimated from the even-indexed items and scored on the odd-indexed ones -- and
  ``v = mean_f Var_z s(f, z) / (4 n)`` the sampling variance. ``b`` does not depend on n, so
  it is stored with the trial's fit; ``lambda`` is computed per budget.

Both methods draw their k-means seed from the shared ``"irt_anchors"`` stream, so P-IRT and
GP-IRT use the same core set in a trial (paired, as the paper ran both with one seed).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from benchcast import irt, seeding
from benchcast.data.item_level import is_binary
from benchcast.errors import ConfigError, DataError, did_you_mean
from benchcast.methods.base import NOT_STORED, Method, Progress, check_budget, check_scores, register
from benchcast.methods.prefit import Prefit, register_prefit

#: the IRT fitters (config key ``fitter``) and the keyword arguments each accepts
IRT_FITTER_KEYS = {
    # MAP by L-BFGS with empirical-Bayes priors (ours, fast; :func:`benchcast.irt.fit_mirt_2pl`)
    # (``dtype: float32``: the subjects x items work in float32, for whole leaderboards)
    "map": ("dims", "ability_scale", "disc_scale", "diff_scale", "max_iter", "tol", "dtype"),
    # the paper's fitter re-implemented: mean-field SVI of tinyBenchmarks' hierarchical model
    # (:func:`benchcast.irt.fit_mirt_2pl_svi`); ``dtype: float32`` trains in torch's / py-irt's
    # precision (~1.6x faster), ``float64`` (default) keeps parameters and optimiser in float64
    "svi": ("dims", "epochs", "lr", "dtype"),
}
#: every key a config's IRT section may set; ``dims_grid`` (any fitter): choose ``dims`` per fit by
#: tinyBenchmarks' validation heuristic (:func:`choose_dims`)
IRT_FIT_KEYS = ("dims_grid", "fitter") + tuple(sorted({k for keys in IRT_FITTER_KEYS.values() for k in keys}))


@dataclass
class IRTTrialFit:
    """What P-IRT and GP-IRT need from one trial's source models."""

    disc: np.ndarray  # (N, dims) item discriminations, full source fit
    diff: np.ndarray  # (N,) item difficulties (py-irt convention: logit uses dims * diff)
    bias: float  # b: P-IRT's mean absolute held-out error on validation source models
    mean_variance: float  # mean over source models of Var_z s(f, z) (v = mean_variance / (4 n))
    # wall-clock seconds are not part of a stored fit (its bytes must not depend on the machine)
    fit_seconds: float = field(default=0.0, metadata=NOT_STORED)  # the full source fit (P-IRT's training cost)
    bias_seconds: float = field(default=0.0, metadata=NOT_STORED)  # the held-out refit for b (GP-IRT's extra cost)
    shared_from: int | None = None  # the trial whose fit this is (fit_irt_trials shares identical source sets)
    #: k-means anchors and weights by budget (:func:`trial_anchors`), made once by the IRT job for
    #: both P-IRT and GP-IRT (same seed stream, so the same anchors); ``None``: made at fit
    anchors: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
    anchor_seconds: dict[int, float] | None = field(default=None, metadata=NOT_STORED)  # k-means seconds (Table 2)

    @property
    def dims(self) -> int:
        return self.disc.shape[1]


def check_binary(source: np.ndarray, what: str = "source scores") -> None:
    if not is_binary(source):
        raise DataError(
            what,
            "score",
            "IRT methods need binary (0/1) scores; found other values",
            "use P-IRT, GP-IRT and tinyBenchmarks only on 0/1-scored benchmarks (the paper's footnote 1); "
            "`benchcast methods` lists the methods that take scores in [0, 1]",
        )


def check_fit_params(irt_params: dict | None) -> dict:
    """The IRT fit settings every study shares (``fitter`` and that fitter's keyword arguments,
    :data:`IRT_FITTER_KEYS`), checked: an unknown fitter or a key it does not take is a ConfigError."""
    params = dict(irt_params or {})
    fitter = params.get("fitter", "map")
    if fitter not in IRT_FITTER_KEYS:
        raise ConfigError(
            f"unknown IRT fitter {fitter!r}; choose one of {', '.join(IRT_FITTER_KEYS)} "
            "(config misses_the_mark.irt.fitter or irt_validation.fit.fitter)"
        )
    unknown = set(params) - {"fitter", "dims_grid"} - set(IRT_FITTER_KEYS[fitter])
    if "dims_grid" in params and (
        not params["dims_grid"] or not all(isinstance(d, int) and d >= 1 for d in params["dims_grid"])
    ):
        raise ConfigError(f"IRT dims_grid must be a non-empty list of dimensions >= 1, got {params['dims_grid']!r}")
    if unknown:
        first = sorted(unknown)[0]
        raise ConfigError(
            f"IRT parameter(s) {sorted(unknown)} do not apply to fitter {fitter!r}"
            f"{did_you_mean(first, IRT_FITTER_KEYS[fitter])}; it takes {', '.join(IRT_FITTER_KEYS[fitter])}"
        )
    return params


def resolved_fit_params(irt_params: dict | None) -> dict:
    """The IRT settings with every default the fitter would use filled in, so two spellings of one
    fit compare equal (``{}`` and ``{"dims": 10}`` under the MAP fitter)."""
    import inspect

    params = check_fit_params(irt_params)
    fitter = params.setdefault("fitter", "map")
    fit = irt.fit_mirt_2pl_svi if fitter == "svi" else irt.fit_mirt_2pl
    for key, arg in inspect.signature(fit).parameters.items():
        if key in IRT_FITTER_KEYS[fitter] and key not in params:
            params[key] = arg.default
    return params


def fit_irt(
    responses: np.ndarray, rng: np.random.Generator, irt_params: dict | None = None, observed: np.ndarray | None = None
) -> irt.IRTParams:
    """Fit the multidimensional 2PL with the configured fitter (``fitter``: ``map`` default, or ``svi``)."""
    params = check_fit_params(irt_params)
    params.pop("dims_grid", None)  # chosen by the caller (choose_dims)
    fitter = params.pop("fitter", "map")
    if fitter == "svi":
        return irt.fit_mirt_2pl_svi(responses, observed, rng=rng, **params)
    return irt.fit_mirt_2pl(responses, observed, rng=rng, **params)


def heldout_bias(source: np.ndarray, rng: np.random.Generator, irt_params: dict | None = None, every: int = 5) -> float:
    """tinyBenchmarks' estimate of P-IRT's error: refit without models ``0, every, 2*every, ...``,
    estimate those models' abilities on the even items, average |predicted - true| on the odd items."""
    params = check_fit_params(irt_params)
    m = source.shape[0]
    val = np.arange(0, m, every)
    train = np.setdiff1d(np.arange(m), val)
    if len(train) < 2 or len(val) < 1:
        raise ConfigError(
            f"GP-IRT's bias estimate needs >= 2 training and >= 1 validation source model; got {m} models"
        )
    fit = fit_irt(source[train], rng, params)
    seen, unseen = np.arange(0, source.shape[1], 2), np.arange(1, source.shape[1], 2)
    theta = irt.estimate_ability(source[val][:, seen], fit.disc[seen], fit.diff[seen])
    pred = irt.response_probabilities(theta, fit.disc[unseen], fit.diff[unseen]).mean(axis=1)
    return float(np.mean(np.abs(pred - source[val][:, unseen].mean(axis=1))))


def choose_dims(source: np.ndarray, rng: np.random.Generator, irt_params: dict) -> tuple[int, dict[int, float]]:
    """The IRT dimension tinyBenchmarks' tutorial picks (``training_irt.ipynb``: fit without every
    fifth model for each candidate D, score the held-out models' predicted accuracy on the odd items
    from abilities estimated on the even ones, keep the D with the smallest error -- the error
    :func:`heldout_bias` computes): ``(dims, {D: error})``; the first D on ties."""
    errors = {int(d): heldout_bias(source, rng, {**irt_params, "dims": int(d)}) for d in irt_params["dims_grid"]}
    return min(errors, key=errors.get), errors


def fit_trial_irt(
    source: np.ndarray, rng: np.random.Generator, irt_params: dict | None = None, with_bias: bool = True
) -> IRTTrialFit:
    """One trial's IRT: the full source fit and (for GP-IRT) the held-out bias ``b``. With
    ``dims_grid``, the dimension is chosen first (:func:`choose_dims`) and ``b`` is the chosen
    dimension's held-out error."""
    check_binary(source)
    params = check_fit_params(irt_params)
    t0 = time.perf_counter()
    errors = None
    if "dims_grid" in params:
        params["dims"], errors = choose_dims(source, rng, params)
    fit = fit_irt(source, rng, params)
    t1 = time.perf_counter()
    if errors is not None:
        bias = errors[params["dims"]] if with_bias else float("nan")
    else:
        bias = heldout_bias(source, rng, params) if with_bias else float("nan")
    return IRTTrialFit(
        disc=fit.disc,
        diff=fit.diff,
        bias=bias,
        mean_variance=float(np.var(source, axis=1).mean()),
        fit_seconds=t1 - t0,
        bias_seconds=time.perf_counter() - t1,
    )


def fit_irt_trials(
    scores: np.ndarray,
    by_trial: dict[int, tuple[np.ndarray, np.ndarray]],
    base_seed: int,
    irt_params: dict | None = None,
    with_bias: bool = True,
    share_identical_sources: bool = True,
    log=lambda s: None,
    only=None,
) -> dict[int, IRTTrialFit]:
    """The IRT fit of every trial's source models (seed stream ``"irt"``), as the workflow's
    prefit job (:class:`IRTPrefit`) makes it once per (dataset, split) for all budgets and both methods.

    ``share_identical_sources`` (default): trials whose source models are the same set (every
    trial of the extrapolation split: the weakest half of the models) share the fit of the
    first such trial instead of refitting the same data from another random start (ours;
    the paper's code refits per trial). The shared fit's ``fit_seconds`` / ``bias_seconds``
    are repeated on every trial that uses it (its training cost), and ``shared_from`` names
    the trial that made it.

    ``only``: fit these trials only (one part of a prefit split over several jobs); a trial whose
    fit is shared from one outside them gets that trial's fit, made from that trial's seed, so the
    parts together are the fits of the whole.
    """
    order = sorted(by_trial)
    first_of, made_by = {}, {}
    for trial in order:
        key = np.sort(by_trial[trial][0]).tobytes()
        first_of[trial] = made_by.setdefault(key, trial) if share_identical_sources else trial
    chosen = None if only is None else set(only)
    wanted = order if chosen is None else [t for t in order if t in chosen]
    to_fit = sorted({first_of[t] for t in wanted})
    progress = Progress(len(to_fit), log, "irt")
    made = {}
    for k, trial in enumerate(to_fit):
        src = by_trial[trial][0]
        made[trial] = fit_trial_irt(scores[src], seeding.rng(base_seed, trial, "irt"), irt_params, with_bias)
        made[trial].shared_from = trial
        progress(k + 1)
    fits = {}
    for trial in wanted:
        first = first_of[trial]
        fits[trial] = made[trial] if first == trial else dataclasses.replace(made[first], shared_from=first)
    return fits


def irt_anchors(disc: np.ndarray, diff: np.ndarray, budget: int, rng: np.random.Generator):
    """k-means anchors on the IRT item embedding (tinyBenchmarks): ``(anchors, weights)``.

    ``anchors[c]`` is the item nearest cluster ``c``'s centre (may repeat), ``weights[c]``
    the cluster's share of the N items."""
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    x = np.column_stack([disc, diff])
    with warnings.catch_warnings():
        # items with identical answers from few sources share their IRT parameters: fewer distinct
        # points than clusters is expected (the empty clusters get weight 0), not a failure
        warnings.simplefilter("ignore", ConvergenceWarning)
        km = KMeans(n_clusters=budget, n_init="auto", random_state=int(rng.integers(2**31 - 1))).fit(x)
    d2 = (km.cluster_centers_**2).sum(1)[:, None] - 2 * km.cluster_centers_ @ x.T + (x**2).sum(1)[None, :]
    anchors = d2.argmin(axis=1)
    weights = np.bincount(km.labels_, minlength=budget) / x.shape[0]
    return anchors, weights


def trial_anchors(
    fit: IRTTrialFit, budgets, base_seed: int, trial: int
) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], dict[int, float]]:
    """:func:`irt_anchors` of one trial's fit for every budget, each from a fresh generator of
    the ``irt_anchors`` stream -- the generator P-IRT's and GP-IRT's ``fit`` receive in that
    trial (:func:`benchcast.trials.runner.run_job`), so the anchors are the ones they would draw.
    Returns ``({budget: (anchors, weights)}, {budget: seconds})`` (``seconds``: the k-means
    time, part of these methods' training time in Table 2)."""
    out, seconds = {}, {}
    for n in budgets:
        t0 = time.perf_counter()
        out[int(n)] = irt_anchors(fit.disc, fit.diff, int(n), seeding.rng(base_seed, trial, _IRTMethod.rng_stream))
        seconds[int(n)] = time.perf_counter() - t0
    return out, seconds


class _IRTMethod(Method):
    rng_stream = "irt_anchors"
    needs_prefit = "irt"

    def __init__(self, irt: dict | None = None, bias_every: int = 5):
        self.irt_params = check_fit_params(irt)
        self.bias_every = int(bias_every)

    def params(self):
        return {"irt": dict(self.irt_params), "bias_every": self.bias_every}

    def fit(self, source, budget, rng, prefit: IRTTrialFit | None = None):
        check_budget(source, budget)
        check_scores(self.name, is_binary(source), "the source matrix")
        if prefit is None:
            prefit = fit_trial_irt(source, rng, self.irt_params, with_bias=self.wants_bias)
        elif prefit.disc.shape[0] != source.shape[1]:
            raise ValueError(f"IRT fit has {prefit.disc.shape[0]} items, source has {source.shape[1]}")
        self.fit_ = prefit
        self.n_items_, self.budget_ = source.shape[1], budget
        if prefit.anchors is not None and budget in prefit.anchors:
            self.anchors_, self.weights_ = prefit.anchors[budget]
        else:
            self.anchors_, self.weights_ = irt_anchors(prefit.disc, prefit.diff, budget, rng)
        self.unseen_ = np.setdiff1d(np.arange(self.n_items_), self.anchors_)
        return self

    def _pirt(self, y: np.ndarray) -> np.ndarray:
        """Eq. 12 from the targets' anchor responses ``y`` (T, n) (anchor order, repeats kept)."""
        f = self.fit_
        theta = irt.estimate_ability(y, f.disc[self.anchors_], f.diff[self.anchors_])
        irt_part = irt.response_probabilities(theta, f.disc[self.unseen_], f.diff[self.unseen_]).mean(axis=1)
        share = self.budget_ / self.n_items_
        return share * y.mean(axis=1) + (1 - share) * irt_part

    def _query(self, oracle):
        return oracle.query(self.anchors_)


@register("p_irt")
class PIRT(_IRTMethod):
    """P-IRT (eq. 12): IRT prediction on the unseen items blended with the anchors' mean."""

    wants_bias = False

    def estimate(self, oracle, rng):
        return self._pirt(self._query(oracle))


@register("gp_irt")
class GPIRT(_IRTMethod):
    """GP-IRT (eq. 13): ``lambda`` * anchor-weighted mean + (1 - ``lambda``) * P-IRT."""

    wants_bias = True

    def lambda_(self) -> float:
        return gp_irt_lambda(self.fit_.bias, self.fit_.mean_variance, self.budget_)

    def estimate(self, oracle, rng):
        y = self._query(oracle)
        lam = self.lambda_()
        return lam * (y @ self.weights_) + (1 - lam) * self._pirt(y)


def gp_irt_lambda(bias: float, mean_variance: float, budget: int) -> float:
    """tinyBenchmarks' ``lambda = b^2 / (v + b^2)`` with ``v = mean_variance / (4 n)``.

    lambda -> 1 (trust the anchors) when P-IRT's bias dominates; -> 0 (trust P-IRT) when the
    anchors' sampling variance dominates (small n, or b -> 0)."""
    if not np.isfinite(bias):
        raise ValueError("GP-IRT needs the held-out bias b; the IRT fit was made without it")
    v = mean_variance / (4 * budget)
    b2 = bias**2
    if b2 + v == 0:
        return 0.0
    return float(b2 / (v + b2))


# ------------------------------------------------------------------ storage of per-trial fits


def fits_to_frames(fits: dict[int, IRTTrialFit]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-trial fits as two tidy tables: items (trial, item_idx, disc_0.., diff) and trials."""
    items, trials = [], []
    for t, f in sorted(fits.items()):
        d = {"trial": np.int32(t), "item_idx": np.arange(f.disc.shape[0], dtype=np.int32)}
        d.update({f"disc_{k}": f.disc[:, k] for k in range(f.dims)})
        d["diff"] = f.diff
        items.append(pd.DataFrame(d))
        trials.append((t, f.bias, f.mean_variance, f.dims))
    return (
        pd.concat(items, ignore_index=True),
        pd.DataFrame(trials, columns=["trial", "bias", "mean_variance", "dims"]).astype({"trial": np.int32}),
    )


def anchors_to_frame(fits: dict[int, IRTTrialFit]) -> pd.DataFrame:
    """The fits' precomputed anchors as a table: trial, budget, position, item_idx, weight
    (no timings: this is a deterministic output; the seconds go to the IRT timing table)."""
    rows = [
        pd.DataFrame(
            {
                "trial": np.int32(t),
                "budget": np.int32(n),
                "position": np.arange(len(a), dtype=np.int32),
                "item_idx": np.asarray(a, dtype=np.int32),
                "weight": np.asarray(w, dtype=np.float64),
            }
        )
        for t, f in sorted(fits.items())
        for n, (a, w) in sorted((f.anchors or {}).items())
    ]
    if not rows:
        return pd.DataFrame(
            {
                "trial": np.int32([]),
                "budget": np.int32([]),
                "position": np.int32([]),
                "item_idx": np.int32([]),
                "weight": np.float64([]),
            }
        )
    return pd.concat(rows, ignore_index=True)


@register_prefit
class IRTPrefit(Prefit):
    """The trial's IRT fit with its k-means anchors for every budget, shared by P-IRT and GP-IRT.

    ``settings``: ``irt`` (the fitter's settings), ``with_bias`` (GP-IRT's held-out refit) and
    ``share_identical_sources`` (see :func:`fit_irt_trials`)."""

    kind = "irt"
    splittable = True

    def fit_trials(self, scores, by_trial, settings, budgets, base_seed, log, only=None):
        share = bool(settings.get("share_identical_sources", True))
        log(
            f"IRT fits of {len(by_trial) if only is None else len(only)} trials, params={dict(settings['irt'])}, bias={settings['with_bias']}, "
            f"share_identical_sources={share}"
        )
        fits = fit_irt_trials(
            scores,
            by_trial,
            base_seed,
            settings["irt"],
            settings["with_bias"],
            share_identical_sources=share,
            log=log,
            only=only,
        )
        # P-IRT's and GP-IRT's k-means anchors of every trial and budget, once for both methods
        budgets = [int(n) for n in budgets if int(n) <= scores.shape[1]]
        for trial, fit in fits.items():
            fit.anchors, fit.anchor_seconds = trial_anchors(fit, budgets, base_seed, trial)
        log(f"anchors for budgets {budgets}: {sum(sum(f.anchor_seconds.values()) for f in fits.values()):.1f}s")
        timing = pd.DataFrame(
            {
                "trial": list(fits),
                "fit_seconds": [f.fit_seconds for f in fits.values()],
                "bias_seconds": [f.bias_seconds for f in fits.values()],
                "shared_from": [f.shared_from for f in fits.values()],
                **{f"anchor_seconds_n{n}": [f.anchor_seconds[n] for f in fits.values()] for n in budgets},
            }
        )
        made = timing.shared_from == timing.trial
        log(
            f"{int(made.sum())} distinct fits, {timing.fit_seconds[made].sum():.1f}s full fits, "
            f"{timing.bias_seconds[made].sum():.1f}s bias refits"
        )
        return fits, timing

    def to_tables(self, fits):
        items, trials = fits_to_frames(fits)
        return {"items": items, "trials": trials, "anchors": anchors_to_frame(fits)}

    def from_tables(self, tables):
        return frames_to_fits(tables["items"], tables["trials"], tables["anchors"])

    def training_seconds(self, timing, method, budget):
        """The IRT fit, GP-IRT's bias refit and this budget's k-means anchors (Table 2)."""
        t = timing.set_index("trial")
        kmeans = t.get(f"anchor_seconds_n{budget}", 0.0)
        return t.fit_seconds + (t.bias_seconds if method == "gp_irt" else 0.0) + kmeans


def frames_to_fits(
    items: pd.DataFrame, trials: pd.DataFrame, anchors: pd.DataFrame | None = None
) -> dict[int, IRTTrialFit]:
    """Inverse of :func:`fits_to_frames` (and of :func:`anchors_to_frame` when ``anchors`` is given)."""
    by_trial = {}
    if anchors is not None:
        for (t, n), g in anchors.groupby(["trial", "budget"], sort=False):
            g = g.sort_values("position")
            by_trial.setdefault(int(t), {})[int(n)] = (
                g["item_idx"].to_numpy(np.int64),
                g["weight"].to_numpy(np.float64),
            )
    disc_cols = sorted((c for c in items.columns if c.startswith("disc_")), key=lambda c: int(c[5:]))
    out = {}
    for (t, g), (_, row) in zip(items.groupby("trial", sort=True), trials.sort_values("trial").iterrows()):
        if int(row.trial) != int(t):
            raise DataError(
                "IRT fits",
                "trial",
                f"item table and trial table disagree (trial {t} vs {row.trial})",
                "delete the IRT prefit folder (results/prefit/.../irt) and rerun",
            )
        g = g.sort_values("item_idx")
        out[int(t)] = IRTTrialFit(
            disc=g[disc_cols].to_numpy(np.float64),
            diff=g["diff"].to_numpy(np.float64),
            bias=float(row.bias),
            mean_variance=float(row.mean_variance),
            anchors=by_trial.get(int(t)),
        )  # None without an anchors table
    return out
