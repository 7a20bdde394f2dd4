"""The collaborative-filtering estimator of Zhong, Yi & Ye ("Efficient Evaluation of Large Language
Models via Collaborative Filtering", Section 4, Algorithms 1-2): a probe chosen per target model and
task, then optimal-transport oversampling and item-level collaborative filtering for the items it
did not answer. No code is released and the text gives no hyper-parameter values: every choice the
text leaves open is a field of :class:`CFSettings`, documented there.

Stage 1 (Alg. 1), per task ``i``:

- item importance ``v(x|F)``: the sample variance of item ``x``'s column over the models ``F``
  (Eq. 6, ddof 1). On 0/1 data it ranks items as Eq. 11 does (``1/|#right - #wrong|``), with ties
  between every item of the same count: ties are broken by a fixed random order of each task's
  items (seed stream ``cf:ties``), never by position;
- the probe starts with the items of highest ``v(x|F_B)`` (``F_B``: all initial models); each round
  asks the target the new items, takes its ``n_similar`` most similar initial models ``F_S`` on the
  probe so far and adds the best unselected items by ``alpha v(x|F_B) + (1 - alpha) v(x|F_S)``
  (Eq. 7). The budget is split into ``rounds + 1`` near-equal parts: the first is the initial probe.
  Similarity of answer vectors: the cosine of the answers coded -1/+1 (on 0/1 data the agreement
  rate, rescaled); the 0/1 cosine is undefined for a target that missed every probe item.

Stage 2 (Alg. 2), per task ``i``: ``p_i = (a_s + c_ns) / |T_i|`` (Eq. 8) with ``c_ns`` predicted:

- **oversampling** (Eq. 9): the tasks whose initial-model accuracy vectors have cosine
  ``>= tau0`` with task ``i`` (centred first by default: uncentred, every HELM-Lite task pair is
  0.87-1.00) give their selected items ``st``; the exact optimal transport plan ``P`` between
  ``st`` and task ``i``'s unselected items ``ns`` (uniform marginals, Euclidean cost between the
  items' initial-model columns) maps them to ``|ns|`` synthetic items, the barycentric projection
  ``D_st P |ns|`` (the text's ``D_st P`` without the ``|ns|`` would shrink every entry below
  ``1/|ns|``), thresholded at 0.5 on 0/1 data (Appendix D.2); the target's answers move the same way.
  The synthetic items join the selected ones for what follows;
- Eq. 10: unselected items whose Eq. 7 score is below ``v_bar / tau1`` (``v_bar``: the mean score
  of the selected items) are predicted by the mean of all initial models;
- the rest: the mean -1/+1 cosine ``c`` to their ``neighbours`` (3) most similar selected items
  over the initial models; where ``c >= max(tau2, q-quantile of c over the task)`` the target's mean
  on those items, else the mean of ``F_S`` on the item.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from benchcast import seeding
from benchcast.data.item_level import is_binary
from benchcast.errors import ConfigError
from benchcast.methods.base import UNIT, Method, check_budget, register
from benchcast.oracle import TaskOracle


@dataclass(frozen=True)
class CFSettings:
    """Hyper-parameters (Table 6 of the paper; no values are given there)."""

    n_similar: int = 20  # |S|: similar initial models
    alpha: float = 0.5  # Eq. 7: weight of the importance over all initial models
    rounds: int = 3  # Alg. 1 iterations after the initial probe
    tau0: float = 0.5  # Eq. 9: task similarity for oversampling
    tau1: float = 2.0  # Eq. 10: an item below v_bar / tau1 is unimportant
    tau2: float = 0.5  # smallest mean similarity for the target's own answers
    q: float = 0.5  # quantile of the task's mean similarities (tau3 = max(tau2, quantile))
    neighbours: int = 3  # similar selected items per unselected item
    centre_tasks: bool = True  # centre the accuracy vectors before the task cosine
    oversample: bool = True  # Eq. 9 on or off (Fig. 8)
    binary: bool = True  # threshold synthetic items at 0.5 (where the scores are 0/1: CFProbe.fit)


def item_variance(columns: np.ndarray) -> np.ndarray:
    """Eq. 6: sample variance (ddof 1) of every item column over the rows (models)."""
    return columns.var(axis=0, ddof=1) if len(columns) > 1 else np.zeros(columns.shape[1])


def signed_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine between the rows of ``a`` and ``b`` with scores coded ``2x - 1`` (0 for a zero vector)."""
    a, b = 2 * np.asarray(a, dtype=np.float32) - 1, 2 * np.asarray(b, dtype=np.float32) - 1
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    out = a @ b.T  # float32: exact on -1/+1 answers (integer sums far below 2**24), half the time
    out /= np.where(na > 0, na, 1.0)[:, None]
    out /= np.where(nb > 0, nb, 1.0)[None, :]
    return out


def task_similarity(initial: np.ndarray, tasks: np.ndarray, centre: bool) -> np.ndarray:
    """Cosine between the tasks' accuracy vectors over the initial models (Section 4.2)."""
    n_tasks = int(tasks.max()) + 1
    acc = np.stack([initial[:, tasks == t].mean(axis=1) for t in range(n_tasks)])
    if centre:
        acc = acc - acc.mean(axis=1, keepdims=True)
    norm = np.linalg.norm(acc, axis=1)
    norm = np.where(norm > 0, norm, 1.0)
    return (acc @ acc.T) / np.outer(norm, norm)


def _ranked(score: np.ndarray, tie_rank: np.ndarray) -> np.ndarray:
    """Indices by descending score, ties by ``tie_rank``."""
    return np.lexsort((tie_rank, -score))


def probe_parts(budget: int, rounds: int) -> list[int]:
    """The budget in ``rounds + 1`` near-equal parts (the larger first), empty parts dropped: the
    initial probe, then each round's new items."""
    n = rounds + 1
    parts = [budget // n + (1 if r < budget % n else 0) for r in range(n)]
    return [p for p in parts if p > 0]


def oversample(
    st_columns: np.ndarray, st_target: np.ndarray, ns_columns: np.ndarray, binary: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 9: synthetic items for the unselected ones from the selected items of similar tasks --
    the barycentric projection of the exact transport plan. ``st_columns`` (models, |st|),
    ``st_target`` (|st|,), ``ns_columns`` (models, |ns|). Returns the synthetic columns (models,
    |ns|) and the target's synthetic answers (|ns|,)."""
    import ot  # POT, on first use: the registry import stays free of scipy

    n_st, n_ns = st_columns.shape[1], ns_columns.shape[1]
    cost = ot.dist(st_columns.T, ns_columns.T, metric="euclidean")
    plan = ot.emd(np.full(n_st, 1 / n_st), np.full(n_ns, 1 / n_ns), cost) * n_ns
    columns, target = st_columns @ plan, st_target @ plan
    if binary:
        columns, target = (columns >= 0.5).astype(np.float64), (target >= 0.5).astype(np.float64)
    return columns, target


class CollaborativeFiltering:
    """Algorithms 1-2 over every task of a matrix at once (oversampling reads the other tasks'
    selections). ``fit`` takes the initial models' full results; ``estimate`` asks each target
    through a :class:`~benchcast.oracle.TaskOracle` and returns (targets, tasks) accuracies."""

    def __init__(self, settings: CFSettings = CFSettings()):
        self.settings = settings

    def fit(self, initial: np.ndarray, tasks: np.ndarray, budgets: np.ndarray, rng: np.random.Generator):
        self.initial_ = np.asarray(initial, dtype=np.float64)
        self.tasks_ = np.asarray(tasks, dtype=np.int64)
        self.budgets_ = np.asarray(budgets, dtype=np.int64)
        self.items_ = [np.flatnonzero(self.tasks_ == t) for t in range(len(self.budgets_))]
        self.tie_rank_ = [rng.permutation(len(items)) for items in self.items_]  # a random order per task
        self.v_all_ = [item_variance(self.initial_[:, items]) for items in self.items_]
        self.item_mean_ = self.initial_.mean(axis=0)
        self.similar_tasks_ = task_similarity(self.initial_, self.tasks_, self.settings.centre_tasks)
        return self

    def _select_row(self, oracle: TaskOracle, row: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Alg. 1 for target ``row`` on every task: per task, the selected items (task positions),
        the target's answers on them and the final similar models. A task's selection reads only
        its own answers, so each round asks every task's items in one query: an adaptive method's
        user answers ``rounds + 1`` batches, not that many per subtask (the same selections as
        asking task by task)."""
        s, n_tasks = self.settings, len(self.items_)
        parts = [probe_parts(int(b), s.rounds) for b in self.budgets_]
        chosen = [list(_ranked(self.v_all_[t], self.tie_rank_[t])[: parts[t][0]]) for t in range(n_tasks)]
        answers: list[np.ndarray] = [np.empty(0)] * n_tasks
        similar = [np.arange(len(self.initial_))] * n_tasks
        for r in range(max(map(len, parts), default=0)):
            live = [t for t in range(n_tasks) if r < len(parts[t])]
            asked = [self.items_[t][chosen[t]] for t in live]
            got = oracle.query(np.concatenate(asked), rows=[row])[0]
            ends = np.cumsum([len(a) for a in asked])
            for t, ans, on in zip(live, np.split(got, ends[:-1]), asked, strict=True):
                answers[t] = ans
                agreement = signed_cosine(ans[None, :], self.initial_[:, on])[0]
                similar[t] = np.lexsort((np.arange(len(agreement)), -agreement))[: s.n_similar]
                if r + 1 < len(parts[t]):  # the similar models' columns only, not the task's every round
                    task_similar = self.initial_[np.ix_(similar[t], self.items_[t])]
                    score = s.alpha * self.v_all_[t] + (1 - s.alpha) * item_variance(task_similar)
                    score[chosen[t]] = -np.inf
                    chosen[t] += list(_ranked(score, self.tie_rank_[t])[: parts[t][r + 1]])
        return [(np.asarray(chosen[t], dtype=np.int64), answers[t], similar[t]) for t in range(n_tasks)]

    def estimate(self, oracle: TaskOracle, rng: np.random.Generator | None = None) -> np.ndarray:
        """:meth:`predict` of :meth:`augment` of :meth:`select`, one target's task at a time: an
        augmented task holds the models' columns of its unselected items, so all of them at once
        held about one copy of the matrix per target (10 GB at 2,500 x 25,000, 20 targets)."""
        picks = self.select(oracle)
        out = np.empty((len(picks), len(self.items_)))
        for row, row_picks in enumerate(picks):
            for t in range(len(self.items_)):
                out[row, t] = self._predict(t, row_picks[t], self._augmented(t, row_picks, row))
        return out

    def select(self, oracle: TaskOracle) -> list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """Stage 1 for every target and task: ``picks[row][t]`` is (selected task positions, the
        target's answers on them, its similar initial models)."""
        return [self._select_row(oracle, row) for row in range(oracle.n_targets)]

    def augment(self, picks, cache: dict | None = None) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        """Eq. 9 for every target and task: the selected items' columns and the target's answers,
        with the synthetic items of the similar tasks appended when oversampling is on. ``cache``
        (one dict per ``picks``) keeps each transport by target, task and similar tasks, so
        settings that pick the same similar tasks (a ``tau0`` sweep) solve it once."""
        return [
            [self._augmented(t, row_picks, row, cache) for t in range(len(self.items_))]
            for row, row_picks in enumerate(picks)
        ]

    def predict(self, picks, augmented) -> np.ndarray:
        """Stage 2 (Alg. 2) for every target and task from :meth:`select` and :meth:`augment`."""
        return np.array(
            [
                [self._predict(t, row_picks[t], row_aug[t]) for t in range(len(self.items_))]
                for row_picks, row_aug in zip(picks, augmented, strict=True)
            ]
        ).reshape(len(picks), len(self.items_))

    def _augmented(self, t: int, row_picks, row: int = 0, cache: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        s, items = self.settings, self.items_[t]
        chosen, answers, _ = row_picks[t]
        sel_columns = self.initial_[:, items[chosen]]
        unselected = np.setdiff1d(np.arange(len(items)), chosen)
        others = [u for u in range(len(self.items_)) if u != t and self.similar_tasks_[t, u] >= s.tau0]
        if not (s.oversample and others and len(unselected)):
            return sel_columns, answers
        key = (row, t, tuple(others), s.binary)
        if cache is not None and key in cache:
            return cache[key]
        st = np.concatenate([self.items_[u][row_picks[u][0]] for u in others])
        st_target = np.concatenate([row_picks[u][1] for u in others])
        syn_columns, syn_target = oversample(
            self.initial_[:, st], st_target, self.initial_[:, items[unselected]], s.binary
        )
        out = np.hstack([sel_columns, syn_columns]), np.concatenate([answers, syn_target])
        if cache is not None:
            cache[key] = out
        return out

    def _predict(self, t: int, pick, augmented) -> float:
        """Alg. 2 for one target on task ``t``: its selection ``pick`` and the (possibly
        oversampled) selected columns and answers ``augmented``."""
        s, items = self.settings, self.items_[t]
        chosen, answers, similar = pick
        unselected = np.setdiff1d(np.arange(len(items)), chosen)
        if not len(unselected):
            return float(answers.mean())
        sel_columns, sel_target = augmented
        ns_columns = self.initial_[:, items[unselected]]

        def importance(cols: np.ndarray) -> np.ndarray:
            return s.alpha * item_variance(cols) + (1 - s.alpha) * item_variance(cols[similar])

        v_bar = importance(sel_columns).mean()
        v_ns = importance(ns_columns)
        low = v_ns < v_bar / s.tau1
        predicted = self.item_mean_[items[unselected[low]]].sum()  # Eq. 10
        rest = ns_columns[:, ~low]
        if rest.shape[1]:
            sim = signed_cosine(rest.T, sel_columns.T)
            top, top_sim = top_columns(sim, min(s.neighbours, sim.shape[1]))
            c_bar = top_sim.mean(axis=1, dtype=np.float64)
            tau3 = max(s.tau2, float(np.quantile(c_bar, s.q)))
            own = c_bar >= tau3
            predicted += sel_target[top[own]].mean(axis=1).sum()
            predicted += rest[similar][:, ~own].mean(axis=0).sum()
        return float((answers.sum() + predicted) / len(items))


def top_columns(values: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the columns of the ``m`` largest values, largest first, ties to the lower column
    (a stable descending sort's first ``m``, in ``O(m n)`` rather than ``O(n log n)``), and those
    values. ``values`` (a float array) is overwritten: the similarity matrices are large."""
    rows = np.arange(len(values))
    top = np.empty((len(values), m), dtype=np.int64)
    picked = np.empty((len(values), m), dtype=values.dtype)
    for j in range(m):
        top[:, j] = np.argmax(values, axis=1)
        picked[:, j] = values[rows, top[:, j]]
        values[rows, top[:, j]] = -np.inf
    return top, picked


def cf_estimates(
    initial: np.ndarray,
    targets: np.ndarray,
    tasks: np.ndarray,
    budgets: np.ndarray,
    settings: CFSettings,
    base_seed: int,
    trial: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit on ``initial``, estimate every row of ``targets`` (its full results behind a
    :class:`TaskOracle`). Returns the (targets, tasks) estimates and the items spent per task."""
    model = CollaborativeFiltering(settings).fit(initial, tasks, budgets, seeding.rng(base_seed, trial, "cf:ties"))
    oracle = TaskOracle(targets, tasks, budgets)
    return model.estimate(oracle), oracle.spent_per_task


def split_budget(budget: int, sizes: np.ndarray) -> np.ndarray:
    """``budget`` items over tasks: one each, the rest in proportion to the tasks' other items by
    largest remainder (ties to the earlier task), none above its task's size."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if not len(sizes) <= budget <= sizes.sum():
        raise ValueError(
            f"a budget of {budget} cannot give each of {len(sizes)} tasks an item out of {int(sizes.sum())}"
        )
    rest = sizes - 1
    exact = (budget - len(sizes)) * rest / max(int(rest.sum()), 1)
    parts = np.floor(exact).astype(np.int64)
    order = np.lexsort((np.arange(len(sizes)), -(exact - parts)))
    for t in order[: budget - len(sizes) - int(parts.sum())]:
        parts[t] += 1
    return parts + 1


@register("cf_probe")
class CFProbe(Method):
    """The collaborative-filtering probe as an item-level method of a benchmark's subtasks: the
    budget split over the subtasks in proportion to their sizes (:func:`split_budget`), each
    subtask estimated by :class:`CollaborativeFiltering` (the probe is adaptive: it asks in
    ``rounds + 1`` batches), the benchmark's estimate the size-weighted mean of the subtasks'
    (``per_group_``: the subtasks' own estimates). Defaults: the settings the CF study's inner
    validation chose on Open LLM v2 under the date split (``results/tables/cf_tasks/tuning.csv``).

    ``initial_max`` (None: every source model; not the paper's) keeps at most that many source
    models as the initial models, drawn at random by the fit: every estimate measures item
    similarities and transport costs over the initial models, so on a whole leaderboard (5,000
    models) a new model's estimate costs in proportion to them (a whole-leaderboard setting,
    measured in docs/scaling.md)."""

    scores = UNIT

    uses_item_groups = True
    asks_in_rounds = True  # per subtask, the initial probe, then ``rounds`` more
    #: the settings ``__init__`` takes (its signature says ``**settings``): CFSettings' fields and
    #: ``initial_max``
    param_names = (*(f.name for f in dataclasses.fields(CFSettings)), "initial_max")

    def __init__(self, initial_max: int | None = None, **settings):
        tuned = {"n_similar": 20, "rounds": 3, "alpha": 0.75, "q": 0.75, "tau2": 0.5, "tau1": 8.0, "tau0": 0.75}
        self.settings = CFSettings(**{**tuned, **settings})
        if initial_max is not None and int(initial_max) <= self.settings.n_similar:
            raise ValueError(
                f"initial_max must exceed n_similar ({self.settings.n_similar}) or be null, got {initial_max}"
            )
        self.initial_max = None if initial_max is None else int(initial_max)

    def params(self):
        return {**dataclasses.asdict(self.settings), "initial_max": self.initial_max}

    def fit(self, source, budget, rng, groups=None):
        check_budget(source, budget)
        # any labels: integer codes 0..k-1 keep their order (the new-model tools name them so)
        tasks = (
            np.zeros(source.shape[1], dtype=np.int64) if groups is None else np.unique(groups, return_inverse=True)[1]
        )
        self.sizes_ = np.bincount(tasks)
        if budget < len(self.sizes_):
            raise ConfigError(
                f"cf_probe: a budget of {budget} cannot probe each of {len(self.sizes_)} subtasks; fix: raise it"
            )
        if self.initial_max is not None and len(source) > self.initial_max:
            kept = np.sort(rng.choice(len(source), size=self.initial_max, replace=False))
            source = np.asarray(source)[kept]
        # synthetic answers rounded to 0/1 only where the answers are 0/1: partial credit stays partial
        settings = self.settings if is_binary(source) else dataclasses.replace(self.settings, binary=False)
        self.cf_ = CollaborativeFiltering(settings).fit(source, tasks, split_budget(budget, self.sizes_), rng)
        return self

    def estimate(self, oracle, rng):
        self.per_group_ = self.cf_.estimate(oracle, rng)  # (targets, subtasks)
        return self.per_group_ @ self.sizes_ / self.sizes_.sum()
