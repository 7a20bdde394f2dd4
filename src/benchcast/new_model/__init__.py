"""For a user with a new model: the tools behind ``benchcast select``, ``estimate`` and ``plan``.

Item level (any item-level method of the registry):

* :func:`select` -- which items the model should answer; :func:`estimate` -- its full-benchmark
  score with an interval (:mod:`benchcast.new_model.api`), from fits stored without pickle under
  ``results/models/`` (:mod:`benchcast.new_model.fits`, :mod:`benchcast.methods.state`) and
  calibrated on folds of held-out models; a leaderboard of your own
  (:mod:`benchcast.new_model.leaderboard`);
* :mod:`benchcast.new_model.planner` -- how many items tell two models apart (``benchcast plan``).

Benchmark level (BenchPress, ``benchcast complete``): the completion package,
:mod:`benchcast.completion.complete` and :mod:`benchcast.completion.calibration`.
"""

from benchcast.renames import renamed_names

__all__ = ["Selection", "estimate", "select", "stored_fit"]

_renamed = renamed_names(__name__)  # the names renamed in 0.3.0, for one release


def __getattr__(name):
    """The API on first use: ``benchcast.new_model.interrupts``, which the command line loads
    before anything else, stays free of the fits' libraries."""
    if name in __all__:
        from benchcast.new_model import api

        return getattr(api, name)
    return _renamed(name)
