"""Benchmark-level score completion (the BenchPress study).

A models x benchmarks score matrix is mostly missing and on mixed scales. The pipeline of
BenchPress Section 4.1 completes it in four steps, each in its own module:

* :mod:`.transforms` -- the seven feature transforms and per-column standardization on the
  observed training entries, and their inverse (with clipping of percentage benchmarks);
* :mod:`.completers` -- the twelve completion methods of Appendix C.1, all operating on the
  transformed, standardized matrix (NaN = missing);
* :mod:`.pipeline` -- transform -> standardize -> complete -> invert, as one call;
* :mod:`.evaluation` -- the paper's held-out folds, per-fold MedAPE / MedAE / coverage.
"""
