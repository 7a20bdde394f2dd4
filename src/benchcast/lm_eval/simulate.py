"""Harness logs written from known answers, laid out as ``lm-eval run --log_samples`` lays them out.

For checks that the logs path reads exactly what the CSV path reads (the same answers, the same
estimate), and for timing the command line. Each document is logged once per filter (the
leaderboard's filter first, with the true score; a second filter with the other score, which must be
ignored), and the lines come as several processes leave them: each process's documents (a shuffled
share) filter by filter, the processes' lines concatenated one after the other.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchcast.data.harness_identity import HarnessMap

STAMP = "2026-01-01T00-00-00.000000"


def write_logs(
    folder: str | Path,
    model: str,
    answers: dict[int, float],
    hmap: HarnessMap,
    rng: np.random.Generator,
    other_filter: str = "benchcast-decoy",
    stamp: str = STAMP,
    processes: int = 2,
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
        shuffled = [docs[k] for k in rng.permutation(len(docs))]
        for rank in range(processes):
            mine = shuffled[rank::processes]
            for filt, flip in ((spec.filter, False), (other_filter, True)):
                for doc, score in mine:
                    lines.append(
                        {
                            "doc_id": doc,
                            "doc": {"question": f"{task} {doc}"},
                            "target": "0",
                            "filter": filt,
                            "metrics": [spec.metric],
                            spec.metric: 1.0 - score if flip else score,
                        }
                    )
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (out / f"samples_{task}_{stamp}.jsonl").write_text(text)
    (out / f"results_{stamp}.json").write_text(json.dumps({"model_name": model, "results": {}}) + "\n")
    return out
