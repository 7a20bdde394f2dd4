"""Estimation methods. Importing this package registers every method in ``REGISTRY``."""

from benchcast.methods import aipw, anchor_points, double_optimize, irt_methods, lasso, pca, random_sampling  # noqa: F401  # noqa: F401
from benchcast.methods.base import REGISTRY, Method, make_method  # noqa: F401
