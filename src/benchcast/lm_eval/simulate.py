"""Harness logs written from known answers, laid out as ``lm-eval run --log_samples`` lays them out.

For checks that the logs path reads exactly what the CSV path reads (the same answers, the same
estimate), and for timing the command line: each task's lines come in a shuffled order, as
several processes concatenate them, and each document is logged once per filter (the leaderboard's
filter with the true score, a second filter with another score that must be ignored).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchcast.lm_eval.identity import HarnessMap

STAMP = "2026-01-01T00-00-00.000000"


def write_logs(
    folder: str | Path,
    model: str,
    answers: dict[int, float],
    hmap: HarnessMap,
    rng: np.random.Generator,
    other_filter: str = "benchcast-decoy",
    stamp: str = STAMP,
) -> Path:
    """``answers`` (item index -> 0/1) as ``<folder>/<model>/samples_<task>_<stamp>.jsonl`` files
    (only the tasks answered) and the run's ``results_<stamp>.json`` naming the model."""
    out = Path(folder) / model.replace("/", "__")
    out.mkdir(parents=True, exist_ok=True)
    by_task: dict[str, list[tuple[int, float]]] = {}
    for j, score in answers.items():
        task, doc = hmap.items[j]
        by_task.setdefault(task, []).append((int(doc), float(score)))
    for task, docs in sorted(by_task.items()):
        spec = hmap.tasks[task]
        lines = []
        for doc, score in docs:
            for filt, value in ((spec.filter, score), (other_filter, 1.0 - score)):
                lines.append(
                    {
                        "doc_id": doc,
                        "doc": {"question": f"{task} {doc}"},
                        "target": "0",
                        "filter": filt,
                        "metrics": [spec.metric],
                        spec.metric: value,
                    }
                )
        order = rng.permutation(len(lines))
        text = "".join(json.dumps(lines[k]) + "\n" for k in order)
        (out / f"samples_{task}_{stamp}.jsonl").write_text(text)
    (out / f"results_{stamp}.json").write_text(json.dumps({"model_name": model, "results": {}}) + "\n")
    return out
