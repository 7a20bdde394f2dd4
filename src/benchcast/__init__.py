"""benchcast: estimate a model's full-benchmark score from a few of its results.

The library behind the Snakemake workflow, one subpackage per capability:

* ``benchcast.data`` -- the catalog, raw readers and validated Parquet matrices;
* ``benchcast.methods`` (item level, with their internals), ``benchcast.irt`` and
  ``benchcast.completion`` (benchmark level) -- the estimation methods;
* ``benchcast.oracle``, ``benchcast.seeding``, ``benchcast.trials`` -- the budget-enforcing oracle,
  the one seed scheme and the trial runner every study uses;
* ``benchcast.stats`` and ``benchcast.output`` -- shared statistics, tables and figures;
* ``benchcast.studies`` -- one package per reproduced paper;
* ``benchcast.new_model`` -- for a user with a new model: ``benchcast.select`` (which items to
  run), ``benchcast.estimate`` (the score with an interval), ``complete`` and the item planner;
* ``benchcast.workflow`` and ``benchcast.cli`` -- the workflow's machinery and the command line.
"""

from __future__ import annotations

from benchcast import renames
from benchcast.renames import RENAMED, RENAMED_NAMES, renamed_names  # noqa: F401 (the public names)

__version__ = "0.2.0"

renames.install()


def __getattr__(name):  # select / estimate on first use: `import benchcast` stays light
    if name in ("select", "estimate"):
        from benchcast import new_model

        return getattr(new_model, name)
    raise AttributeError(f"module 'benchcast' has no attribute {name!r}")
