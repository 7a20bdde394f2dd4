"""Old names that still work for one release: renamed modules (imported under the old name as the
new module itself) and names renamed inside a module, each with a DeprecationWarning naming the new
one (CHANGELOG.md lists them)."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

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
    "benchcast.completion.deploy": "benchcast.completion.complete",
    "benchcast.completion.new_model": "benchcast.completion.calibration",
    "benchcast.plan_cli": "benchcast.cli.plan",
    "benchcast.deploy_cli": "benchcast.cli.select",
    "benchcast.threads": "benchcast.blas",
    "benchcast.new_model.state": "benchcast.methods.state",
    "benchcast.new_model.answers": "benchcast.data.answers",
    "benchcast.lm_eval.identity": "benchcast.data.harness_identity",
    "benchcast.new_model.complete": "benchcast.completion.complete",
    "benchcast.new_model.calibration": "benchcast.completion.calibration",
}


#: names renamed in 0.3.0 inside a module (CHANGELOG.md): the old name still works, with a
#: DeprecationWarning, for one release (the module's ``__getattr__ = renamed_names(__name__)``)
RENAMED_NAMES = {
    "benchcast.new_model": {"deployed": "stored_fit"},
    "benchcast.new_model.api": {"deployed": "stored_fit", "DeployedFit": "StoredFit"},
    "benchcast.new_model.fits": {"DeployedFit": "StoredFit"},
    "benchcast.completion.complete": {
        "DeployedReliability": "ReliabilityModel",
        "build_deployed": "build_reliability_model",
    },
    "benchcast.completion.calibration": {"deploy_reliability": "calibrate_for_new_models"},
    "benchcast.trials": {"make_splits": "trial_splits"},
    "benchcast.trials.runner": {"make_splits": "trial_splits"},
}


def renamed_names(module: str):
    """The module-level ``__getattr__`` of ``module`` that serves its old names (:data:`RENAMED_NAMES`)
    as the new ones, warning once per use."""
    names = RENAMED_NAMES[module]

    def __getattr__(name):
        if name in names:
            warnings.warn(
                f"{module}.{name} is now {module}.{names[name]}; the old name will be removed in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(sys.modules[module], names[name])
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


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


def install() -> None:
    """Serve the renamed modules' old names (``import benchcast`` calls it once)."""
    if not any(isinstance(f, _RenamedModules) for f in sys.meta_path):
        sys.meta_path.insert(0, _RenamedModules())
