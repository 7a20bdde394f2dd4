"""benchcast: estimate a model's full-benchmark score from a few of its results.

The library behind the Snakemake workflow: data ingest (``benchcast.data``), the
budget-enforcing oracle and harness (``benchcast.oracle``, ``benchcast.harness``),
the estimation methods (``benchcast.methods``), and metrics/figures.
"""

__version__ = "0.1.0"
