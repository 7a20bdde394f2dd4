"""A model's answers read from lm-evaluation-harness's per-item logs (:mod:`benchcast.lm_eval.files`).

:func:`read_logs` takes the output folder, one model's folder or ``samples_*.jsonl`` files (several
add up: the rounds of an adaptive selection), keeps the lines of the leaderboard's leaf tasks whose
filter is the one the leaderboard scores by, and keys each by (task, ``doc_id``). Besides what
:mod:`~benchcast.lm_eval.files` refuses, a task of another dataset and a document the leaderboard
does not have are refused in one line naming the file, the line and the fix.
"""

from __future__ import annotations

from pathlib import Path

from benchcast.data.answers import Answers
from benchcast.data.harness_identity import HarnessMap
from benchcast.errors import DataError
from benchcast.lm_eval.files import logged_again, one_model, sample_files, task_scores


def read_logs(paths, hmap: HarnessMap) -> Answers:
    """The answers the logs under ``paths`` give to the items of ``hmap``'s leaderboard."""
    source = " ".join(str(p) for p in ([paths] if isinstance(paths, str | Path) else paths))
    files = sample_files(paths)
    wanted = [f for f in files if f.task in hmap.tasks]
    for f in files:
        if f.explicit and f.task not in hmap.tasks:
            raise DataError(
                f.path,
                "(task)",
                f"task {f.task!r} is not a task of {hmap.dataset} (its tasks: {', '.join(sorted(hmap.tasks))})",
                f"pass the logs of {hmap.dataset}'s tasks, or estimate on the dataset these logs are of",
            )
    if not wanted:
        raise DataError(
            source,
            "(tasks)",
            f"no log of a task of {hmap.dataset} (found {', '.join(sorted({f.task for f in files}))})",
            f"pass the logs of {hmap.dataset}'s tasks ({', '.join(sorted(hmap.tasks))})",
        )
    one_model(wanted, source)
    index = hmap.index()
    scores: dict[int, float] = {}
    where: dict[int, str] = {}
    for f in wanted:
        task = hmap.tasks[f.task]
        for doc, (score, n) in task_scores(f, task.metric, task.filter).items():
            j = index.get((f.task, doc))
            if j is None:
                raise DataError(
                    f.path,
                    f"line {n}",
                    f"document {doc} of {f.task} is not an item of {hmap.dataset}"
                    + (f" (the task has {task.docs} documents)" if task.docs else ""),
                    "run the tasks the leaderboard holds, in their own version",
                )
            if j in scores and scores[j] != score:
                raise logged_again(f, n, doc, task.metric, score, scores[j], where[j])
            if j not in scores:
                scores[j], where[j] = score, f"{f.path.name} line {n}"
    return Answers(scores, where, set(), source, harness=True, paths=frozenset(str(f.path.resolve()) for f in wanted))
