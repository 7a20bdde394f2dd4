"""BenchPress Section 6.1 / Appendix E.1: what affects prediction reliability.

"You Don't Need to Run Every Eval" (BenchPress, arXiv 2606.24020) asks which benchmark-side
and model-side factors are associated with the error of its default score predictor (Logit
Bias ALS, rank 2, lambda 0.1). Each factor is a no-effect hypothesis tested under both
error metrics (MedAPE, MedAE) and rejected at ``p < 0.01``:

* **Table 7 (benchmark side).** H1 low-rank fit, H2 score level, H3 score spread are
  Spearman rank correlations between a benchmark feature and the benchmark's error
  (:func:`benchmark_correlational`); H4 target coverage, H5 strong-neighbour presence,
  H6 strong-neighbour support, H7 same-category evidence are paired Wilcoxon signed-rank
  tests on hide-half ablations (:func:`bench_target_coverage`,
  :func:`bench_strong_neighbors`, :func:`bench_neighbor_support`, :func:`bench_same_category`).
  :func:`benchmark_hypotheses` runs all seven.
* **Table 8 (model side).** H1 model size, H2 model type, H3 score level, H4 low-rank fit are
  Spearman correlations against per-model hide-half errors (:func:`model_correlational`);
  H5 strong-peer presence, H6 strong-peer support, H7 same-provider evidence, H8 observation
  count are paired Wilcoxon tests on ablations (:func:`model_peer_removal`,
  :func:`model_peer_support`, :func:`model_observation_count`); H9 training-anchor recency
  compares training on the oldest vs the middle third of models by release date
  (:func:`temporal_anchor`). :func:`model_hypotheses` runs all nine.
* **Appendix E.1.1 / E.1.2 per-benchmark and per-model predictability** --
  :func:`predictability`.

The protocols follow the paper's released code (``microsoft/benchpress``,
``experiments/sec6_trust/prediction_error_analysis/{benchmark,model}_analysis`` and
``benchpress/{evaluation_harness,stats,default_predictions}.py``), read for the facts; each
fact is stated where it is used as "the paper's code ...". The random draws (which cells are
held out, which are masked) are reproduced draw for draw with the same ``RandomState``
seeds and the same order of draws, so on the paper's matrix the splits should be the
paper's. Where the code is absent or a protocol choice is ours, the docstring says so and
the choice is a parameter.

Inputs the public mirror lacks, and protocol choices exposed as parameters:

* model H1 needs parameter counts (the paper's code reads ``params_total_M`` from its own
  data JSON; the website ``data.json`` has no size field) -- ``params=None`` skips it;
* benchmark H7 needs the paper code's benchmark categories (also from its data JSON); the
  caller passes labels, e.g. the paper's Table 9 inventory categories;
* model H5 / H7 baseline (``peer_baseline``) and model H8 scored cells (``h8_cells``): the
  paper's code by default, our cleaner alternatives on request.

Tests
-----
Spearman: ``scipy.stats.spearmanr`` (two-sided, Student-t approximation with n - 2
degrees of freedom; Appendix E.1 "Spearman rank correlation tests"). Wilcoxon:
``scipy.stats.wilcoxon`` on the paired deltas ``treatment - baseline``, two-sided, zero
deltas discarded (scipy's default ``zero_method="wilcox"``, which the paper's code uses),
``method="auto"`` (exact for small n, normal approximation otherwise). The appendix text
describes only the normal approximation; the code calls scipy's default, and the paper's
H9 ``p = 0.002`` with 10 paired seeds is the exact two-sided minimum ``2 / 2**10``, so the
code's choice is followed.

Predictors
----------
Every function that fits the predictor takes ``predict_batch``: a callable mapping a stack
of training matrices ``(K, M, B)`` (NaN = missing) to completed score matrices of the same
shape. The default, :func:`default_predict_batch`, is the paper's default predictor via
:func:`benchcast.studies.benchpress.predictor.predict_default_batch` (per-matrix
standardization, :func:`~benchcast.completion.completers.bias_als_batch`); tests inject
cheap stand-ins. All functions are deterministic.

Modules
-------
* :mod:`.stats` -- the Spearman and Wilcoxon tests, fitting the predictor on stacks of
  training matrices, the held-out cells (the paper's folds, hide-half holdouts) and pooled
  errors;
* :mod:`.correlational` -- per-benchmark / per-model features, the pairwise |r| between
  benchmarks and between models, and the correlational tests (benchmark H1-H3, model H1-H4);
* :mod:`.ablations` -- benchmark H4-H7 and model H5-H8; the two H6 ablations are one
  function over columns or rows (:func:`partner_support`);
* :mod:`.temporal` -- model H9;
* :mod:`.tables` -- Tables 7 and 8, predictability, the comparison with the paper.

Every public name, and the private helpers the tests use, is re-exported here:
``from benchcast.studies.benchpress import hypotheses as H; H.<name>``.
"""

from benchcast.studies.benchpress.hypotheses.ablations import (
    bench_neighbor_support,
    bench_same_category,
    bench_strong_neighbors,
    bench_target_coverage,
    model_observation_count,
    model_peer_removal,
    model_peer_support,
    partner_support,
)
from benchcast.studies.benchpress.hypotheses.correlational import (
    benchmark_abs_corr,
    benchmark_correlational,
    benchmark_features,
    model_abs_corr,
    model_correlational,
    model_features,
    rank2_r2,
)
from benchcast.studies.benchpress.hypotheses.stats import (
    ALPHA,
    METRICS,
    PredictBatch,
    default_predict_batch,
    fold_cells,
    grouped_wilcoxon,
    model_holdout_cells,
    pooled_errors,
    spearman_test,
    wilcoxon_test,
)
from benchcast.studies.benchpress.hypotheses.stats import _model_hide_masks as _model_hide_masks
from benchcast.studies.benchpress.hypotheses.tables import (
    BENCH_HYPOTHESES,
    MODEL_HYPOTHESES,
    benchmark_hypotheses,
    compare_with_paper,
    model_hypotheses,
    predictability,
    sort_table,
)
from benchcast.studies.benchpress.hypotheses.temporal import _condition_offset as _condition_offset
from benchcast.studies.benchpress.hypotheses.temporal import temporal_anchor, temporal_groups
from benchcast.studies.benchpress.settings import SEED

__all__ = [
    "ALPHA",
    "BENCH_HYPOTHESES",
    "METRICS",
    "MODEL_HYPOTHESES",
    "SEED",
    "PredictBatch",
    "bench_neighbor_support",
    "bench_same_category",
    "bench_strong_neighbors",
    "bench_target_coverage",
    "benchmark_abs_corr",
    "benchmark_correlational",
    "benchmark_features",
    "benchmark_hypotheses",
    "compare_with_paper",
    "default_predict_batch",
    "fold_cells",
    "grouped_wilcoxon",
    "model_abs_corr",
    "model_correlational",
    "model_features",
    "model_holdout_cells",
    "model_hypotheses",
    "model_observation_count",
    "model_peer_removal",
    "model_peer_support",
    "partner_support",
    "pooled_errors",
    "predictability",
    "rank2_r2",
    "sort_table",
    "spearman_test",
    "temporal_anchor",
    "temporal_groups",
    "wilcoxon_test",
]
