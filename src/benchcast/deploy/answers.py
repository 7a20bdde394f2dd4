"""A new model's answers: read from CSV (``item_id,score``; optional ``selection_id``) or JSON
(``{item_id: score}`` or ``[{"item_id": ..., "score": ...}]``), or given as a mapping, and checked
against the leaderboard: known items, each once, 0/1 scores. Every error names the file, the entry
and the fix."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from benchcast.errors import DataError


@dataclass(frozen=True)
class Answers:
    scores: dict[int, float]  # item index in the leaderboard -> score
    where: dict[int, str]  # item index -> the entry it came from ("line 3", "key 'x'")
    selection_ids: set[str]  # the selection ids the file states (none: not checked)
    source: str


def _no_duplicate_keys(pairs, path):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise DataError(path, f"key {k!r}", "is given twice", "give each item one answer")
        seen[k] = v
    return seen


def _raw_entries(path: Path) -> tuple[list[tuple[str, object, str]], set[str]]:
    if not path.is_file():
        raise DataError(path, "(file)", "does not exist", "pass the CSV (item_id,score) or JSON file of your answers")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(text, object_pairs_hook=lambda pairs: _no_duplicate_keys(pairs, path))
        except json.JSONDecodeError as exc:
            raise DataError(path, f"(JSON line {exc.lineno})", exc.msg, "fix the JSON syntax") from None
        if isinstance(doc, dict):
            return [(str(k), v, f"key {k!r}") for k, v in doc.items()], set()
        if isinstance(doc, list):
            out, ids = [], set()
            for n, rec in enumerate(doc):
                if not isinstance(rec, dict) or "item_id" not in rec or "score" not in rec:
                    raise DataError(
                        path,
                        f"[{n}]",
                        "is not an object with 'item_id' and 'score'",
                        'write {"item_id": "...", "score": 1}',
                    )
                out.append((str(rec["item_id"]), rec["score"], f"entry [{n}]"))
                if rec.get("selection_id"):
                    ids.add(str(rec["selection_id"]))
            return out, ids
        raise DataError(
            path,
            "(top level)",
            f"expected an object or a list, got {type(doc).__name__}",
            'write {"item_id": score, ...}',
        )
    rows = [r for r in csv.reader(text.splitlines())]
    if not rows or not any(c.strip() for c in rows[0]):
        raise DataError(path, "(header)", "the file is empty", "write a CSV with header item_id,score")
    header = [c.strip() for c in rows[0]]
    missing = [c for c in ("item_id", "score") if c not in header]
    if missing:
        raise DataError(
            path, "(header)", f"missing column(s) {missing}; found {header}", "write a CSV with header item_id,score"
        )
    col = {name: header.index(name) for name in ("item_id", "score")}
    sel = header.index("selection_id") if "selection_id" in header else None
    out, ids = [], set()
    for n, r in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in r):
            continue
        if len(r) != len(header):
            raise DataError(
                path,
                f"line {n}",
                f"has {len(r)} fields, the header has {len(header)}",
                "write one item_id,score pair per line",
            )
        out.append((r[col["item_id"]].strip(), r[col["score"]].strip(), f"line {n}"))
        if sel is not None and r[sel].strip():
            ids.add(r[sel].strip())
    return out, ids


def read_answers(answers, item_ids: list[str], binary: bool = True) -> Answers:
    """``answers``: a path, or a mapping ``{item_id: score}``. Items are matched to ``item_ids``."""
    if isinstance(answers, Mapping):
        source = "<answers>"
        entries, ids = [(str(k), v, f"key {k!r}") for k, v in answers.items()], set()
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
        try:
            score = float(value)
        except (TypeError, ValueError):
            raise DataError(
                source, place, f"score {value!r} is not a number", "write 1 (correct) or 0 (wrong)"
            ) from None
        if not math.isfinite(score) or (binary and score not in (0.0, 1.0)):
            raise DataError(
                source,
                place,
                f"score {value!r} is not 0 or 1",
                "this benchmark is scored 0/1: write 1 (correct) or 0 (wrong)",
            )
        scores[j], where[j] = score, place
    return Answers(scores, where, ids, source)
