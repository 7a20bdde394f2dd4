"""Benchmark-level score completion.

A models x benchmarks score matrix is mostly missing and on mixed scales. The pipeline of
BenchPress Section 4.1 completes it in four steps, each in its own module:

* :mod:`.transforms` -- the seven feature transforms and per-column standardization on the
  observed training entries, and their inverse (with clipping of percentage benchmarks);
* :mod:`.completers` -- the twelve completion methods of Appendix C.1, all operating on the
  transformed, standardized matrix (NaN = missing);
* :mod:`.pipeline` -- transform -> standardize -> complete -> invert, as one call;
  :mod:`.predictors` names one such configuration and the sets the reliability layer uses;
* :mod:`.evaluation` -- held-out folds, per-fold MedAPE / MedAE / coverage;
* :mod:`.reliability` -- risk models, intervals and trust
  for completed cells and for a new model's row;
* :mod:`.complete` -- a new model's other benchmark scores with intervals and trust probabilities
  (``benchcast complete``); :mod:`.calibration` -- the reliability model behind it, calibrated on
  models removed from the matrix as new models.

Everything here takes its settings as arguments; the BenchPress paper's choices (default
predictor, stacks, architecture grid, seeds) are in :mod:`benchcast.studies.benchpress.settings`.
"""
