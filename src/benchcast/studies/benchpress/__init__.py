"""BenchPress ("You don't need to run every eval"): completing a sparse models x benchmarks score
matrix -- the transform x method grid (Section 4), probe sets and temporal deployment (Section 5), hypothesis
tests and the reliability layer (Section 6). Workflow: ``workflow/rules/benchpress.smk``."""
