"""Which lm-evaluation-harness question each item of a leaderboard is.

An item of a benchcast leaderboard is a position in a matrix (``musr/0298``). The harness knows
a question by its **leaf task** and **document index** (its position in the task's evaluation
split, ``test_docs`` else ``validation_docs``), and scores it by a **metric** after a **filter**
(``acc_norm`` after ``none``; ``exact_match`` after ``strict-match``). A :class:`HarnessMap`
holds that identity for every item, and the facts a user needs around it:

* ``identity``: ``verified`` (checked against data), ``assumed`` (stated with its evidence: the
  order of items inside a subtask cannot be checked from aggregate scores) or ``none`` (no map
  can be shown; ``--format lm-eval`` refuses such a dataset);
* per leaf task: the metric, the filter and the number of documents;
* ``display``: the leaderboard's displayed scale, where the catalog knows it.

Where it comes from:

* a catalog dataset: its ``lm_eval`` block in the catalog, written by the ingest into
  ``items.parquet`` as the columns ``lm_eval_task`` and ``lm_eval_doc_id`` and, for the
  per-dataset facts, the file's key-value metadata under :data:`METADATA_KEY`;
* a leaderboard built from harness logs (:mod:`benchcast.lm_eval.board`): item ids are
  ``<task>/<doc_id>`` and the board's Parquet metadata holds the same facts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from benchcast.errors import ConfigError, DataError

#: the Parquet key-value metadata key holding a leaderboard's harness facts (JSON)
METADATA_KEY = b"benchcast.lm_eval"
IDENTITIES = ("verified", "assumed", "none")
#: the items.parquet columns a catalog dataset with a harness identity gets
TASK_COLUMN, DOC_COLUMN = "lm_eval_task", "lm_eval_doc_id"


@dataclass(frozen=True)
class LeafTask:
    name: str
    metric: str
    filter: str
    docs: int | None = None  # documents in the task's evaluation split (None: unknown)


@dataclass(frozen=True)
class Display:
    """The leaderboard's displayed scale: ``100 * max(0, (score - baseline) / (1 - baseline))``
    (the Open LLM Leaderboard v2 normalises a task against its random baseline; ``baseline`` 0
    is a plain percentage)."""

    name: str
    baseline: float = 0.0

    def __call__(self, score: float) -> float:
        return 100.0 * max(0.0, (score - self.baseline) / (1.0 - self.baseline))


@dataclass(frozen=True)
class HarnessMap:
    dataset: str
    identity: str  # verified | assumed | none
    evidence: str
    tasks: dict[str, LeafTask] = field(default_factory=dict)
    items: tuple[tuple[str, int], ...] = ()  # item index -> (leaf task, document index)
    display: Display | None = None
    run_args: str = ""  # harness options the leaderboard ran the tasks with (e.g. --num_fewshot 25)

    @property
    def usable(self) -> bool:
        return self.identity != "none" and bool(self.items)

    @property
    def caveat(self) -> str:
        """What is assumed, in one sentence (the evidence's ``Assumed:`` sentence, else all of it)."""
        _, sep, rest = self.evidence.partition("Assumed: ")
        return rest.rstrip(".") if sep else self.evidence

    def index(self) -> dict[tuple[str, int], int]:
        """(leaf task, document index) -> item index."""
        return {key: j for j, key in enumerate(self.items)}

    def facts(self) -> dict:
        """The per-dataset facts, as stored in Parquet metadata (items are stored apart)."""
        out = {
            "identity": self.identity,
            "evidence": self.evidence,
            "tasks": {t.name: {"metric": t.metric, "filter": t.filter, "docs": t.docs} for t in self.tasks.values()},
            "run_args": self.run_args,
        }
        if self.display is not None:
            out["display"] = {"name": self.display.name, "baseline": self.display.baseline}
        return out


def _facts_error(where, problem: str) -> DataError:
    return DataError(where, "lm_eval", problem, "fix the dataset's lm_eval block in the catalog")


def parse_block(dataset: str, block: Mapping | None, where="the catalog") -> dict:
    """A catalog ``lm_eval`` block, checked: ``identity``, ``evidence``; unless the identity is
    ``none``, ``tasks`` (the leaf tasks in the order the dump holds their items: ``{name, items}``,
    each item of a block being the task's document of that position), ``metric``, ``filter``
    (default ``none``), and optional ``display`` ({name, baseline}) and ``run_args``."""
    if block is None:
        return {"identity": "none", "evidence": f"the catalog states no lm-evaluation-harness task for {dataset}"}
    if not isinstance(block, Mapping):
        raise _facts_error(where, f"datasets.{dataset}.lm_eval is not a mapping")
    identity = block.get("identity")
    if identity not in IDENTITIES:
        raise _facts_error(where, f"datasets.{dataset}.lm_eval.identity is {identity!r}, not one of {IDENTITIES}")
    if not str(block.get("evidence", "")).strip():
        raise _facts_error(where, f"datasets.{dataset}.lm_eval has no evidence (say why the map holds or cannot)")
    unknown = set(block) - {"identity", "evidence", "tasks", "metric", "filter", "display", "run_args"}
    if unknown:
        raise _facts_error(where, f"datasets.{dataset}.lm_eval has unknown keys {sorted(unknown)}")
    out = {"identity": identity, "evidence": " ".join(str(block["evidence"]).split())}
    if identity == "none":
        return out
    tasks = block.get("tasks")
    ok = (
        isinstance(tasks, list) and tasks and all(isinstance(t, Mapping) and {"name", "items"} <= set(t) for t in tasks)
    )
    if not ok or not block.get("metric"):
        raise _facts_error(where, f"datasets.{dataset}.lm_eval needs a metric and tasks: a list of {{name, items}}")
    out.update(
        blocks=[(str(t["name"]), int(t["items"])) for t in tasks],
        metric=str(block["metric"]),
        filter=str(block.get("filter", "none")),
        run_args=str(block.get("run_args", "")),
    )
    if block.get("display") is not None:
        d = block["display"]
        out["display"] = {"name": str(d["name"]), "baseline": float(d.get("baseline", 0.0))}
    return out


def catalog_columns(dataset: str, block: Mapping | None, n_items: int) -> tuple[dict, dict]:
    """The ingest's view: the items.parquet columns (``lm_eval_task``, ``lm_eval_doc_id``; none when
    the identity is ``none``) and the facts to store in its metadata."""
    facts = parse_block(dataset, block)
    if facts["identity"] == "none":
        return {}, facts
    blocks = facts.pop("blocks")
    if sum(size for _, size in blocks) != n_items:
        raise _facts_error(
            "the catalog",
            f"datasets.{dataset}.lm_eval.tasks cover {sum(size for _, size in blocks)} items, the dump has {n_items}",
        )
    metric, filt = facts.pop("metric"), facts.pop("filter")
    facts["tasks"] = {name: {"metric": metric, "filter": filt, "docs": size} for name, size in blocks}
    columns = {
        TASK_COLUMN: [name for name, size in blocks for _ in range(size)],
        DOC_COLUMN: np.concatenate([np.arange(size, dtype=np.int32) for _, size in blocks]),
    }
    return columns, facts


def _from_facts(dataset: str, facts: dict, items: list[tuple[str, int]]) -> HarnessMap:
    tasks = {
        name: LeafTask(name, str(t["metric"]), str(t.get("filter", "none")), t.get("docs"))
        for name, t in (facts.get("tasks") or {}).items()
    }
    d = facts.get("display")
    return HarnessMap(
        dataset=dataset,
        identity=str(facts.get("identity", "none")),
        evidence=str(facts.get("evidence", "")),
        tasks=tasks,
        items=tuple(items),
        display=Display(str(d["name"]), float(d.get("baseline", 0.0))) if d else None,
        run_args=str(facts.get("run_args", "")),
    )


def read_facts(path: Path) -> dict | None:
    """The harness facts stored in a Parquet file's metadata (None when it has none)."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(METADATA_KEY)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        raise DataError(
            path, METADATA_KEY.decode(), "the stored harness facts are not JSON", "rebuild the file"
        ) from None


def split_item_id(item_id: str) -> tuple[str, int] | None:
    """``<task>/<doc_id>`` -> (task, doc_id); None when the id is not of that form."""
    task, _, doc = str(item_id).rpartition("/")
    return (task, int(doc)) if task and doc.isdigit() else None


def harness_map(board) -> HarnessMap:
    """The harness identity of a :class:`~benchcast.new_model.leaderboard.Leaderboard`."""
    name = board.key
    if board.path.is_dir():  # a catalog dataset: the ingest's items.parquet
        items_path = board.path / "items.parquet"
        facts = read_facts(items_path)
        if facts is None:
            return HarnessMap(name, "none", f"the catalog states no lm-evaluation-harness task for {name}")
        if facts.get("identity") == "none":
            return _from_facts(name, facts, [])
        table = pd.read_parquet(items_path, columns=["item_id", TASK_COLUMN, DOC_COLUMN])
        by_id = dict(zip(table["item_id"], zip(table[TASK_COLUMN], table[DOC_COLUMN].astype(int))))
        return _from_facts(name, facts, [by_id[i] for i in board.matrix.item_ids])
    facts = read_facts(board.path) if board.path.suffix.lower() == ".parquet" else None
    if facts is None:
        return HarnessMap(
            name,
            "none",
            f"{board.path} is not a leaderboard built from harness logs "
            "(`benchcast leaderboard from-lm-eval` writes one)",
        )
    items = [split_item_id(i) for i in board.matrix.item_ids]
    if any(i is None for i in items):
        raise DataError(board.path, "header", "an item id is not <task>/<doc_id>", "rebuild it with from-lm-eval")
    return _from_facts(name, facts, items)


def require_usable(hmap: HarnessMap) -> HarnessMap:
    """``hmap`` when its items can be named to the harness, else one line saying why not."""
    if not hmap.usable:
        raise ConfigError(
            f"{hmap.dataset} has no lm-evaluation-harness identity: {hmap.evidence}. "
            "Fix: use the default --format csv and score the items yourself, or build a leaderboard from your "
            "own harness logs (benchcast leaderboard from-lm-eval)"
        )
    return hmap
