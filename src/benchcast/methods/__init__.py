"""Estimation methods. Importing this package registers every method in ``REGISTRY``."""

from benchcast.errors import ConfigError
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
from benchcast.methods.base import REGISTRY, Method, Progress  # noqa: F401
from benchcast.methods.prefit import PREFITS, get_prefit  # noqa: F401


def make_method(name: str, params: dict | None = None) -> Method:
    """A registered method by name, with its settings (``params``: keyword arguments)."""
    if name not in REGISTRY:
        raise ConfigError(
            f"unknown method '{name}'. Known methods: {', '.join(sorted(REGISTRY))}. "
            "Fix: use one of these names in the config's methods list"
        )
    try:
        return REGISTRY[name](**(params or {}))
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"bad parameters for method '{name}': {exc}. Fix: see the method's docstring for its parameters"
        ) from None
