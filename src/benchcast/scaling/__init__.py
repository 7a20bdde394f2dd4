"""The scaling benchmark: synthetic leaderboards of any size and every method's cost on them
(:mod:`benchcast.scaling.benchmark`; ``scripts/performance/benchmark_scaling.py``)."""
