"""The trial runner: one job's trials of a method on source/target splits, through the oracle.

* :mod:`benchcast.trials.runner` -- the trials of one (dataset, split, method, budget) job: splits
  in, estimates and timings out; prefits (a fit shared by a job's methods and budgets);
* :mod:`benchcast.trials.splits` -- source/target model splits ("misses the mark", Sections 4.2-4.3);
* :mod:`benchcast.trials.tasks` -- the same at task level: per-task budgets, release-order splits,
  task-level metrics and any registry method run task by task.
"""

from benchcast.renames import renamed_names
from benchcast.trials.runner import (
    JobResult,
    PrefitResult,
    read_prefit,
    run_job,
    run_prefit,
    splits_by_trial,
    trial_splits,
    write_prefit,
)
from benchcast.trials.splits import make_split

__all__ = [
    "JobResult",
    "PrefitResult",
    "make_split",
    "trial_splits",
    "read_prefit",
    "run_job",
    "run_prefit",
    "splits_by_trial",
    "write_prefit",
]


__getattr__ = renamed_names(__name__)  # the names renamed in 0.3.0, for one release
