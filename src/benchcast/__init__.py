"""benchcast: estimate a model's full-benchmark score from a few of its results.

The library behind the Snakemake workflow: data ingest (``benchcast.data``), the
budget-enforcing oracle and harness (``benchcast.oracle``, ``benchcast.harness``),
the estimation methods (``benchcast.methods``), and metrics/figures. For a user with a new
model: ``benchcast.select`` (which items to run) and ``benchcast.estimate`` (the score with an
interval), from :mod:`benchcast.deploy`.
"""

__version__ = "0.1.0"


def __getattr__(name):  # select / estimate on first use: `import benchcast` stays light
    if name in ("select", "estimate"):
        from benchcast import deploy

        return getattr(deploy, name)
    raise AttributeError(f"module 'benchcast' has no attribute {name!r}")
