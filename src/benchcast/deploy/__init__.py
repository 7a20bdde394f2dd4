"""Item-level methods for a user with a new model: which items to run (:func:`select`), then the
full-benchmark score with an interval (:func:`estimate`), from fits stored without pickle under
``results/models/`` (:mod:`benchcast.deploy.fits`)."""

from benchcast.deploy.api import Selection, deployed, estimate, select

__all__ = ["Selection", "deployed", "estimate", "select"]
