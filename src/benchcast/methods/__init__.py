"""Estimation methods. Importing this package registers every built-in method in ``REGISTRY``; those
other installed packages register under the ``benchcast.methods`` entry points join it when first
asked for (:mod:`benchcast.methods.plugins`)."""

from benchcast.errors import ConfigError, check_keywords, did_you_mean
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
from benchcast.methods.plugins import FAILED, ORIGIN_KEY, ORIGINS, job_params, load_plugins, origin, strip_origin  # noqa: F401
from benchcast.methods.prefit import PREFITS, get_prefit  # noqa: F401


def make_method(name: str, params: dict | None = None, where: str | None = None) -> Method:
    """A registered method by name, with its settings (``params``: keyword arguments).

    The one check of a method's name and settings: the studies call it on every configured method
    when the workflow is built (before any job runs), the command line on the user's choice.
    ``where`` starts the error message (``config misses_the_mark.methods``). A job's parameters
    may hold a plugin method's origin (:func:`~benchcast.methods.plugins.job_params`): it is taken
    off, and must match the installed package."""
    prefix = f"{where}: " if where else ""
    if name not in REGISTRY:
        load_plugins()
    if name in FAILED:
        raise ConfigError(f"{prefix}method '{name}' could not be registered: {FAILED[name]}")
    if name not in REGISTRY:
        raise ConfigError(
            f"{prefix}unknown method '{name}'{did_you_mean(name, REGISTRY) or '.'} Known methods: "
            f"{', '.join(sorted(REGISTRY))}. Fix: use one of these names, or install the package that registers "
            "it (`benchcast methods` lists what is installed)"
        )
    params = strip_origin(name, params, prefix)
    check_keywords(REGISTRY[name], params, f"{prefix}method '{name}'")
    try:
        return REGISTRY[name](**params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"{prefix}bad parameters for method '{name}': {exc}. Fix: see the method's docstring for its parameters"
        ) from None
