"""A selection as lm-evaluation-harness's ``--samples`` file, and the command to run with it.

``lm-eval run --samples FILE`` takes a JSON object mapping leaf task names to lists of document
indices; a task missing from it runs in full, and it cannot be combined with ``--limit``. Two
harness bugs shape what is written and said here: an unsorted index list makes the per-item log
label answers with the wrong ``doc_id`` (lm-evaluation-harness issue #4084), so every list is
sorted and unique; ``--cache_requests`` ignores the selection (#4105), so the command leaves it out
and says so.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pandas as pd

from benchcast.data.harness_identity import HarnessMap
from benchcast.data.io import write_text_atomic
from benchcast.errors import DataError


def samples_of(items: pd.DataFrame, hmap: HarnessMap, item_ids: list[str]) -> dict[str, list[int]]:
    """``{leaf task: sorted unique document indices}`` of the selected ``items`` (their ``item_id``)."""
    position = {item: j for j, item in enumerate(item_ids)}
    out: dict[str, set[int]] = {}
    for item in items["item_id"]:
        task, doc = hmap.items[position[item]]
        out.setdefault(task, set()).add(int(doc))
    return {task: sorted(docs) for task, docs in sorted(out.items())}


def write_samples(samples: dict[str, list[int]], out: str | Path) -> Path:
    """Write the ``--samples`` JSON through a temporary file and a rename."""
    out = Path(out)
    if out.suffix.lower() != ".json":
        raise DataError(out, "(file name)", "the harness's --samples file is JSON", "name it e.g. samples.json")
    write_text_atomic(out, json.dumps(samples, indent=1) + "\n")
    return out


def harness_command(samples: dict[str, list[int]], samples_file: str | Path, hmap: HarnessMap, output_path: str) -> str:
    """The ``lm-eval run`` command that answers the selection (the model is the user's to name)."""
    parts = [
        "lm-eval run --model hf --model_args pretrained=YOUR/MODEL",
        f"--tasks {','.join(samples)}",
        f"--samples {shlex.quote(str(samples_file))}",
        f"--log_samples --output_path {shlex.quote(output_path)}",
    ]
    if hmap.run_args:
        parts.append(hmap.run_args)
    return " ".join(parts)
