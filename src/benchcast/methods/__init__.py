"""Estimation methods. Importing this package registers every method in ``REGISTRY``."""

from benchcast.methods import (  # noqa: F401
    aipw,
    anchor_points,
    clustering,
    collaborative_filtering,
    double_optimize,
    irt_methods,
    lasso,
    low_rank,
    micro_benchmarks,
    pca,
    random_sampling,
    sort_and_search,
    tailored_bench,
)
from benchcast.methods.base import REGISTRY, Method, make_method  # noqa: F401
