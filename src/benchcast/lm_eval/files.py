"""lm-evaluation-harness's per-item log files, read line by line.

``lm-eval run ... --log_samples --output_path OUT`` writes, per leaf task,
``OUT/<model>/samples_<task>_<timestamp>.jsonl``: one JSON line per (document, filter) with
``doc_id``, ``filter``, ``metrics`` (the metric names) and one key per metric. With several
processes the lines are concatenated rank by rank, so nothing here relies on their order.
``results_<timestamp>.json`` beside them names the model (``model_name``). A truncated line, a
missing or non-0/1 metric, two lines that disagree for one document, logs of two models where one
is expected: each is refused in one line naming the file, the line and the fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from benchcast.errors import DataError

SAMPLES_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
RUN_FIX = "run lm-eval with --log_samples --output_path DIR and pass DIR (or its samples_*.jsonl files)"


@dataclass(frozen=True)
class SampleFile:
    path: Path
    task: str
    stamp: str
    explicit: bool  # named on the command line (not found inside a folder)

    @property
    def model(self) -> str:
        """The model the harness names in the run's results file, else the folder's name."""
        results = self.path.with_name(f"results_{self.stamp}.json")
        if results.is_file():
            try:
                name = json.loads(results.read_text()).get("model_name")
            except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
                name = None
            if name:
                return str(name)
        return self.path.parent.name


def sample_files(paths) -> list[SampleFile]:
    """Every ``samples_*.jsonl`` named or found (recursively) under ``paths``, in a stable order."""
    found: dict[Path, SampleFile] = {}
    for given in [Path(p) for p in ([paths] if isinstance(paths, str | Path) else paths)]:
        if not given.exists():
            raise DataError(given, "(file)", "does not exist", RUN_FIX)
        if given.is_file():
            m = SAMPLES_FILE.match(given.name)
            if m is None:
                raise DataError(
                    given, "(file name)", "is not a harness per-item log (samples_<task>_<timestamp>.jsonl)", RUN_FIX
                )
            found.setdefault(given.resolve(), SampleFile(given, m["task"], m["stamp"], True))
            continue
        inside = sorted(given.rglob("samples_*.jsonl"))
        if not inside:
            raise DataError(given, "(folder)", "holds no samples_*.jsonl file", RUN_FIX)
        for path in inside:
            m = SAMPLES_FILE.match(path.name)
            if m is not None:
                found.setdefault(path.resolve(), SampleFile(path, m["task"], m["stamp"], False))
    return sorted(found.values(), key=lambda f: (f.task, f.stamp, str(f.path)))


def one_model(files: list[SampleFile], source: str) -> str:
    """The one model the logs are of (logs of two models are refused)."""
    models: dict[str, Path] = {}
    for f in files:
        models.setdefault(f.model, f.path.parent)
    if len(models) > 1:
        (a, pa), (b, pb) = list(models.items())[:2]
        raise DataError(
            source,
            "model",
            f"logs of {len(models)} models: {a!r} ({pa}) and {b!r} ({pb})",
            "pass the logs of one model (its own folder under the harness's --output_path)",
        )
    return next(iter(models))


def _score(line: dict, metric: str, file: Path, n: int) -> float:
    if metric not in line:
        raise DataError(
            file,
            f"line {n}",
            f"has no {metric!r} (its metrics: {line.get('metrics')})",
            f"this leaderboard scores the task by {metric}: run the task as the leaderboard did",
        )
    value = line[metric]
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and 0 <= value <= 1:  # 0/1, or partial credit (F1, a normalised ROUGE)
        return float(value)
    raise DataError(
        file,
        f"line {n}",
        f"{metric} is {value!r}, not a score in [0, 1]",
        f"score the task by a metric in [0, 1] per item (0/1, or partial credit such as f1); {metric} is not one",
    )


def iter_lines(file: Path):
    """(line number, JSON object) of every non-empty line; a line that is not a JSON object is refused."""
    with open(file, encoding="utf-8") as fh:
        for n, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError:
                line = None
            if not isinstance(line, dict):
                raise DataError(
                    file,
                    f"line {n}",
                    "is not a JSON object (a truncated or cut line?)",
                    "rerun the harness for this task, or restore the file",
                )
            yield n, line


def _doc_id(line: dict, file: Path, n: int) -> int:
    doc = line.get("doc_id")
    if isinstance(doc, bool) or not isinstance(doc, int) or doc < 0:
        raise DataError(file, f"line {n}", f"doc_id is {doc!r}, not a document index", "restore the harness's line")
    return doc


def logged_again(f: SampleFile, n: int, doc: int, metric: str, score: float, first: float, where: str) -> DataError:
    """The error for document ``doc`` logged at line ``n`` of ``f`` with a score other than the
    ``first`` one logged at ``where``."""
    return DataError(
        f.path,
        f"line {n}",
        f"document {doc} of {f.task} is logged again with another {metric} ({score:g}; {first:g} at {where})",
        "pass one run's logs per document (a rerun's logs replace, not add to, the first's)",
    )


def task_scores(f: SampleFile, metric: str, filt: str) -> dict[int, tuple[float, int]]:
    """``{doc_id: (score, line number)}`` of one log file's lines with filter ``filt``; a document
    logged twice must have one score."""
    out: dict[int, tuple[float, int]] = {}
    filters: set[str] = set()
    for n, line in iter_lines(f.path):
        filters.add(str(line.get("filter")))
        if str(line.get("filter")) != filt:
            continue
        doc, score = _doc_id(line, f.path, n), _score(line, metric, f.path, n)
        if doc in out and out[doc][0] != score:
            raise logged_again(f, n, doc, metric, score, out[doc][0], f"line {out[doc][1]}")
        out.setdefault(doc, (score, n))
    if filt not in filters:
        raise DataError(
            f.path,
            "filter",
            f"no line has filter {filt!r} (found {', '.join(sorted(filters)) or 'no lines'})",
            f"this leaderboard scores {f.task} after the {filt!r} filter: run the task's own config",
        )
    return out
