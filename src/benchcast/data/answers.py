"""A new model's answers: read from CSV (``item_id,score``; optional ``selection_id``) or JSON
(``{item_id: score}`` or ``[{"item_id": ..., "score": ...}]``), or given as a mapping, and checked
against the leaderboard: known items, each once, scores as the leaderboard's -- 0/1 (``TRUE``/``FALSE``
as a spreadsheet writes them read as 1/0) on a 0/1 leaderboard, any score in [0, 1] on one of partial
credit. Every error names the file, the entry and the fix."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from benchcast.data.io import BOOLEAN_SCORES
from benchcast.data.score_entries import read_score_entries
from benchcast.errors import DataError


@dataclass(frozen=True)
class Answers:
    scores: dict[int, float]  # item index in the leaderboard -> score
    where: dict[int, str]  # item index -> the entry it came from ("line 3", "key 'x'")
    selection_ids: set[str]  # the selection ids the file states (none: not checked)
    source: str
    harness: bool = False  # read from lm-evaluation-harness logs
    paths: frozenset[str] = frozenset()  # the files read, resolved (none: answers given in memory)

    def extra_fix(self, fix: str) -> str:
        """``fix`` for answers to items that were not asked for, with the harness's usual cause."""
        if not self.harness:
            return fix
        return (
            "run lm-eval with --samples FILE and --tasks only the tasks in FILE (a task missing from --samples "
            "runs in full), and pass only that run's logs"
        )


def _raw_entries(path: Path) -> tuple[list[tuple[str, object, str]], set[str]]:
    entries = read_score_entries(path, "item_id", "item", extra=("selection_id",))
    ids = {str(e["selection_id"]) for *_, e in entries if e.get("selection_id")}
    return [(item, score, where) for item, score, where, _ in entries], ids


#: the fix for a score other than 0/1 given against a 0/1 leaderboard
_BINARY_FIX = (
    "this leaderboard scores its items 0/1: write 1 (correct) or 0 (wrong), or use a leaderboard of the same "
    "metric's partial credit"
)


def read_answers(answers, item_ids: list[str], binary: bool = True) -> Answers:
    """``answers``: a path, several paths (a list or tuple: an adaptive method's rounds, one file
    each; they add up), or a mapping ``{item_id: score}``, matched to ``item_ids``; or answers
    already read (:class:`Answers`, e.g. from harness logs: :mod:`benchcast.lm_eval.logs`)."""
    if isinstance(answers, Answers):
        for j, score in answers.scores.items():
            if binary and score not in (0.0, 1.0):
                raise DataError(answers.source, answers.where[j], f"score {score!r} is not 0 or 1", _BINARY_FIX)
        return answers
    if isinstance(answers, Mapping):
        source = "<answers>"
        entries, ids = [(str(k), v, f"key {k!r}") for k, v in answers.items()], set()
    elif isinstance(answers, list | tuple):
        source, entries, ids = " + ".join(map(str, answers)), [], set()
        for path in answers:
            more, more_ids = _raw_entries(Path(path))
            entries += [(item, value, f"{path} {place}") for item, value, place in more]
            ids |= more_ids
    else:
        source = str(answers)
        entries, ids = _raw_entries(Path(answers))
    index = {str(item): j for j, item in enumerate(item_ids)}
    scores: dict[int, float] = {}
    where: dict[int, str] = {}
    for item, value, place in entries:
        if item not in index:
            raise DataError(
                source,
                place,
                f"item {item!r} is not an item of this leaderboard",
                "use the item ids `benchcast select` wrote",
            )
        j = index[item]
        if j in scores:
            raise DataError(
                source, place, f"item {item!r} is answered again (first at {where[j]})", "give each item one answer"
            )
        if value is None or (isinstance(value, str) and not value.strip()):
            raise DataError(
                source, place, f"item {item!r} has no score", "write 1 (correct) or 0 (wrong), or drop the line"
            )
        if binary and isinstance(value, str) and value in BOOLEAN_SCORES:
            value = BOOLEAN_SCORES[value]  # a spreadsheet's TRUE/FALSE for 1/0
        try:
            score = float(value)
        except (TypeError, ValueError):
            raise DataError(
                source, place, f"score {value!r} is not a number", "write 1 (correct) or 0 (wrong)"
            ) from None
        if not math.isfinite(score) or (binary and score not in (0.0, 1.0)):
            raise DataError(source, place, f"score {value!r} is not 0 or 1", _BINARY_FIX)
        if not 0.0 <= score <= 1.0:
            raise DataError(
                source,
                place,
                f"score {value!r} is not in [0, 1]",
                "write each score as 1 (right), 0 (wrong) or partial credit between them (a metric out of 100 "
                "divided by 100)",
            )
        scores[j], where[j] = score, place
    files = answers if isinstance(answers, list | tuple) else () if isinstance(answers, Mapping) else (answers,)
    return Answers(scores, where, ids, source, paths=frozenset(str(Path(f).resolve()) for f in files))
