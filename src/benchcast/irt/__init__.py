"""Fast multidimensional two-parameter logistic (2PL) IRT: MAP fit, ability estimation, curves.

The paper we reproduce ("How benchmark prediction from fewer data misses the mark",
App. A.2, eq. 12-13) runs P-IRT and GP-IRT with the IRT recipe of tinyBenchmarks
(Polo et al. 2024, "tinyBenchmarks: evaluating LLMs with fewer examples"): py-irt's
``multidim_2pl`` model with 10 dimensions and hierarchical priors, fitted by SVI for 2,000
epochs at learning rate 0.1. For subject (model) ``j`` and item ``i`` that model's logit is

    logit[j, i] = sum_d disc[i, d] * ability[j, d] - dims * diff[i]

The paper's (tinyBenchmarks') copy of py-irt stores the difficulty as an ``(n_items, 1)``
sample that broadcasts over the ``dims`` axis before the sum over it, so the intercept is
``dims * diff`` (the released py-irt 0.7.1 ``multidim_2pl`` is a different model, with a
positive discrimination and a per-dimension difficulty; see the IRT validation study); tinyBenchmarks'
``item_curve`` computes ``clip(a * theta - b, -30, 30).sum(axis=dims)`` with the same effect.
We keep ``diff`` in that convention because tinyBenchmarks clusters items on the embedding
``[disc, diff]`` (:meth:`IRTParams.item_embedding`), so the scale of ``diff`` matters.

Modules (every public name is re-exported here, so import from ``benchcast.irt``):

* :mod:`benchcast.irt.model`: the fitted parameters :class:`IRTParams`, the input checks
  shared by the fitters, tinyBenchmarks' response curve (:func:`response_probabilities`)
  and the mean log-likelihood (:func:`log_likelihood`).
* :mod:`benchcast.irt.map_fit`: :func:`fit_mirt_2pl`, our MAP fit by L-BFGS with
  empirical-Bayes priors (not the paper's / tinyBenchmarks').
* :mod:`benchcast.irt.svi_fit`: :func:`fit_mirt_2pl_svi`, the paper's estimator (py-irt's SVI)
  re-implemented in numpy.
* :mod:`benchcast.irt.ability`: :func:`estimate_ability`, tinyBenchmarks' per-model ML
  abilities solved by our batched damped Newton method.

What is ours (not the paper's / tinyBenchmarks') is described in each module.
"""

from __future__ import annotations

from benchcast.irt.ability import ML_RIDGE, estimate_ability
from benchcast.irt.map_fit import DEFAULT_ABILITY_SCALE, DEFAULT_DIFF_SCALE, DEFAULT_DISC_SCALE, fit_mirt_2pl
from benchcast.irt.model import LOGIT_CLIP, IRTParams, log_likelihood, response_probabilities
from benchcast.irt.svi_fit import PYIRT_EPOCHS, PYIRT_LR, PYIRT_LR_DECAY, fit_mirt_2pl_svi

__all__ = [
    "DEFAULT_ABILITY_SCALE",
    "DEFAULT_DIFF_SCALE",
    "DEFAULT_DISC_SCALE",
    "LOGIT_CLIP",
    "ML_RIDGE",
    "PYIRT_EPOCHS",
    "PYIRT_LR",
    "PYIRT_LR_DECAY",
    "IRTParams",
    "estimate_ability",
    "fit_mirt_2pl",
    "fit_mirt_2pl_svi",
    "log_likelihood",
    "response_probabilities",
]

# Not in ``__all__``, but importable from ``benchcast.irt`` as before the split into
# modules (the tests use the private ones).
from benchcast.irt.map_fit import _fit_map as _fit_map
from benchcast.irt.map_fit import _Objective as _Objective
from benchcast.irt.model import expit as expit
from benchcast.irt.svi_fit import _BoxMullerF32 as _BoxMullerF32
from benchcast.irt.svi_fit import _std_gamma_dalpha as _std_gamma_dalpha
from benchcast.irt.svi_fit import _svi_loss_grad as _svi_loss_grad
from benchcast.irt.svi_fit import _svi_run as _svi_run
from benchcast.irt.svi_fit import _SVIData as _SVIData
from benchcast.irt.svi_fit import _SVILayout as _SVILayout
