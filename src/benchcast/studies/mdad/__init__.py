"""MDAD (Yauney et al., "How Reliable is Language Model Micro-Benchmarking?"): pairwise agreement
between a micro-benchmark and the full benchmark, and the minimum detectable ability difference, for
micro-benchmark selectors across sizes and source-model counts (agreement and MDAD:
:mod:`benchcast.stats.mdad`; the trial protocol: :mod:`benchcast.studies.mdad.protocol`)."""
