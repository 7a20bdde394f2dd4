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

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__version__ = "0.2.0"

#: modules renamed in 0.2.0 (CHANGELOG.md): the old name still imports, with a DeprecationWarning,
#: for one release
RENAMED = {
    "benchcast.harness": "benchcast.trials.runner",
    "benchcast.splits": "benchcast.trials.splits",
    "benchcast.tasks": "benchcast.trials.tasks",
    "benchcast.anchors": "benchcast.methods.anchors",
    "benchcast.pam": "benchcast.methods.pam",
    "benchcast.tailored": "benchcast.methods.tailored",
    "benchcast.metrics": "benchcast.stats.metrics",
    "benchcast.mdad": "benchcast.stats.mdad",
    "benchcast.tables": "benchcast.output.tables",
    "benchcast.plots": "benchcast.output.plots",
    "benchcast.workflow_support": "benchcast.workflow.support",
    "benchcast.workflow_dag": "benchcast.workflow.dag",
    "benchcast.job_resources": "benchcast.workflow.resources",
    "benchcast.schedule": "benchcast.workflow.schedule",
    "benchcast.performance": "benchcast.workflow.performance",
    "benchcast.paper_index": "benchcast.workflow.paper_index",
    "benchcast.planner": "benchcast.new_model.planner",
    "benchcast.deploy": "benchcast.new_model",
    "benchcast.deploy.api": "benchcast.new_model.api",
    "benchcast.deploy.answers": "benchcast.data.answers",
    "benchcast.deploy.fits": "benchcast.new_model.fits",
    "benchcast.deploy.matrix": "benchcast.new_model.leaderboard",
    "benchcast.deploy.replay": "benchcast.new_model.replay",
    "benchcast.deploy.state": "benchcast.methods.state",
    "benchcast.completion.deploy": "benchcast.new_model.complete",
    "benchcast.completion.new_model": "benchcast.new_model.calibration",
    "benchcast.plan_cli": "benchcast.cli.plan",
    "benchcast.deploy_cli": "benchcast.cli.select",
    "benchcast.threads": "benchcast.blas",
    "benchcast.new_model.state": "benchcast.methods.state",
    "benchcast.new_model.answers": "benchcast.data.answers",
    "benchcast.lm_eval.identity": "benchcast.data.harness_identity",
}


class _RenamedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a renamed module's old name as the new module itself (same object, so ``isinstance``
    and stored class names keep working), warning once per import."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in RENAMED:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=fullname == "benchcast.deploy")

    def create_module(self, spec):
        new = RENAMED[spec.name]
        warnings.warn(
            f"{spec.name} is now {new}; the old name will be removed in the next release",
            DeprecationWarning,
            stacklevel=4,
        )
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__  # the import system sets the old name's spec on it next
        return module

    def exec_module(self, module):
        # give the module its own spec back: with the old name's, importlib.resources finds none of
        # its package data (benchcast.new_model's method_facts.json) for the rest of the process
        module.__spec__ = module.__spec__.loader_state


if not any(isinstance(f, _RenamedModules) for f in sys.meta_path):
    sys.meta_path.insert(0, _RenamedModules())


def __getattr__(name):  # select / estimate on first use: `import benchcast` stays light
    if name in ("select", "estimate"):
        from benchcast import new_model

        return getattr(new_model, name)
    raise AttributeError(f"module 'benchcast' has no attribute {name!r}")
