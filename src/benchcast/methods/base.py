"""Method protocol and registry (scikit-learn style: hyper-parameters in ``__init__``,
learned state in ``fit``, every random choice from an explicit ``rng``)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from benchcast.errors import BudgetExceeded, ConfigError
from benchcast.oracle import Oracle

#: the item scores a method's estimator is defined for (:attr:`Method.scores`): right/wrong only, or
#: any score in [0, 1] (partial credit, F1, a normalised ROUGE or BLEU)
BINARY, UNIT = "0/1", "[0, 1]"

#: metadata of a dataclass field a stored fit leaves out (:func:`benchcast.methods.state.write_state`
#: stores its default): wall-clock seconds and the like, so that a fit's bytes do not depend on the
#: machine that built it
NOT_STORED = {"stored": False}


class Method:
    """Estimate each target model's full-benchmark mean from at most ``budget`` of its items.

    Subclasses implement ``fit(source, budget, rng)`` on the fully observed source matrix
    (models x items) and ``estimate(oracle, rng) -> (targets,)``. ``uses_coreset_stream``
    marks methods whose core set is the trial's shared random sample (passed to ``fit`` as
    ``rng``); ``deterministic_fit`` marks methods whose fit depends only on the source
    matrix, so the trial runner may reuse a fit across trials with identical sources.
    ``rng_stream`` lets methods share a seed stream (P-IRT and GP-IRT share their anchors);
    ``needs_prefit`` names a per-trial fit computed once by its own workflow job.
    """

    name: str = "method"
    uses_coreset_stream: bool = False
    deterministic_fit: bool = False
    #: seed stream of ``fit``'s rng when not the shared core-set stream (default "method:<name>")
    rng_stream: str | None = None
    #: name of a budget-independent per-trial fit the trial runner may pass as ``fit(..., prefit=)``
    needs_prefit: str | None = None
    #: ``fit`` takes ``groups=``, each item's subtask (None: one group)
    uses_item_groups: bool = False
    #: ``estimate`` asks in rounds, each depending on the answers before (a new model answers in batches)
    asks_in_rounds: bool = False
    #: the item scores its estimator is defined for: :data:`BINARY` (a Bernoulli likelihood, a
    #: right-then-wrong order: the default, and what a method registered by another package is taken
    #: to need unless it says otherwise) or :data:`UNIT`
    scores: str = BINARY
    #: the settings ``__init__`` takes when its signature does not name them (``**settings``); None:
    #: its signature's (:func:`benchcast.methods.make_method` refuses any other name)
    param_names: tuple[str, ...] | None = None

    def fit(self, source: np.ndarray, budget: int, rng: np.random.Generator) -> Method:
        raise NotImplementedError

    def estimate(self, oracle: Oracle, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def params(self) -> dict:
        return {}

    def min_budget(self) -> int:
        """The smallest budget ``fit`` accepts with these hyper-parameters (a study grid skips
        smaller sizes for this method rather than fail)."""
        return 1

    def difference_standard_error(self, difference: np.ndarray) -> float | None:
        """The estimator's own standard error of the difference of two models' estimates on one
        selection, from ``difference``: the second model's answers minus the first's on the core set
        ``self.coreset_``, in its order. Only an estimator linear in the answers (so that the
        difference of two estimates is the estimate of the difference) with a variance of its own
        has one; None: ``benchcast compare`` calibrates the pair's interval on held-out pairs."""
        return None


def methods_taking_unit_scores() -> list[str]:
    """The registered methods whose estimator is defined for scores in [0, 1]."""
    return sorted(name for name, cls in REGISTRY.items() if getattr(cls, "scores", BINARY) == UNIT)


def check_scores(name: str, binary: bool, where: str) -> None:
    """Stop in one line when method ``name`` is defined for 0/1 scores only and the scores at hand
    (``where``: the leaderboard, the answers) are not all 0 or 1; the line names the methods that
    take them."""
    if binary or getattr(REGISTRY[name], "scores", BINARY) == UNIT:
        return
    raise ConfigError(
        f"{name} is defined for 0/1 item scores only, and {where} holds scores in [0, 1] that are not 0 or 1; "
        f"fix: use a method that takes them ({', '.join(methods_taking_unit_scores())}), or score the items 0/1"
    )


def check_budget(source: np.ndarray, budget: int) -> None:
    n_models, n_items = source.shape
    if budget < 1:
        raise BudgetExceeded(f"budget n={budget} must be >= 1")
    if budget >= n_items:
        raise BudgetExceeded(
            f"budget n={budget} is not smaller than the benchmark's {n_items} items; fix: choose n < number of items"
        )
    if n_models < 2:
        raise ConfigError(f"need at least 2 source models, got {n_models}")


def random_coreset(n_items: int, budget: int, rng: np.random.Generator) -> np.ndarray:
    """The first ``budget`` items of a random permutation (as the paper's code draws them)."""
    return rng.permutation(n_items)[:budget]


def random_subsets(
    n_items: int, size: int, count: int, rng: np.random.Generator, chunk_cells: int = 2**22
) -> np.ndarray:
    """``count`` independent uniform random ``size``-subsets of ``range(n_items)``, as rows.

    Each row is distributed as ``rng.permutation(n_items)[:size]``, drawn by a partial
    Fisher--Yates shuffle run on all rows at once (``size`` vectorised swap steps instead of
    ``count`` full permutations: about 5-10x faster for Random-Search-Learn's 10,000
    candidates). Rows are drawn in chunks of at most ``chunk_cells / n_items`` rows to bound
    memory; the chunking is fixed by the arguments, so the result is reproducible.
    """
    if not 0 <= size <= n_items:
        raise ValueError(f"subset size {size} must be between 0 and n_items = {n_items}")
    out = np.empty((count, size), dtype=np.intp)
    rows_per_chunk = max(1, chunk_cells // max(n_items, 1))
    identity = np.arange(n_items, dtype=np.intp)
    for start in range(0, count, rows_per_chunk):
        perm = np.empty((min(rows_per_chunk, count - start), n_items), dtype=np.intp)
        perm[:] = identity  # 2.4x faster than np.tile
        flat = perm.reshape(-1)  # a view: flat indices beat 2-D fancy indexing
        row_start = np.arange(len(perm)) * n_items
        for j in range(size):
            swap = row_start + (j + rng.integers(0, n_items - j, size=len(perm)))  # uniform on j .. n_items-1
            picked = flat[swap]
            flat[swap] = perm[:, j]
            perm[:, j] = picked
        out[start : start + len(perm)] = perm[:, :size]
    return out


REGISTRY: dict[str, Callable[..., Method]] = {}


def register(name: str):
    def deco(cls):
        cls.name = name
        REGISTRY[name] = cls
        return cls

    return deco


class Progress:
    """Writes 'trial k of K, elapsed, expected remaining' lines at most every ``every`` seconds."""

    def __init__(self, total: int, log: Callable[[str], None], label: str, every: float = 10.0):
        self.total, self.log, self.label, self.every = total, log, label, every
        self.start = time.perf_counter()
        self.last = -np.inf

    def __call__(self, done: int) -> None:
        now = time.perf_counter()
        if done == self.total or now - self.last >= self.every:
            self.last = now
            elapsed = now - self.start
            remaining = elapsed / done * (self.total - done) if done else float("nan")
            self.log(
                f"{self.label}: trial {done} of {self.total}, elapsed {elapsed:.1f}s, "
                f"expected remaining {remaining:.1f}s"
            )
