"""A leaderboard of partial credit from the real lm-evaluation-harness (issue 56, acceptance 3).

    python scripts/dev/harness_f1_board.py --models 150 --docs 400 --work f1_work --out f1_board.parquet

A generative task of ``--docs`` documents ("Repeat: <2-13 words>") scored per document by the
harness's own DROP F1 (``lm_eval.tasks.drop.utils.process_results``), answered by ``--models``
``parrot`` models (``tests/workflow/lm_eval_driver.py``: each repeats some of the words, more of them
the higher its skill and the shorter the prompt), run through the harness's Python API; then
``benchcast leaderboard from-lm-eval --metric toy_f1=f1`` writes the leaderboard. Its held-out test:
``scripts/dev/partial_credit_heldout.py --board``. Needs ``requirements-lm-eval.txt``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "workflow"))


def main(argv: list[str] | None = None) -> int:
    from test_lm_eval_partial_credit import write_f1_task  # the test's task: one definition

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=150)
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    tasks = args.work / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    write_f1_task(tasks, args.docs)
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(args.work / "hf")}
    models = [f"lab/parrot-{k}={k + 1}" for k in range(args.models)]
    driver = REPO / "tests" / "workflow" / "lm_eval_driver.py"
    cmd = [sys.executable, str(driver), str(tasks), str(args.work / "zoo"), "toy_f1", *models, "--model", "parrot"]
    subprocess.run(cmd, check=True, env=env, cwd=args.work, stdout=subprocess.DEVNULL)
    out = args.out.resolve()
    subprocess.run(
        [sys.executable, "-m", "benchcast.cli", "leaderboard", "from-lm-eval", "zoo", "--metric", "toy_f1=f1"]
        + ["--out", str(out)],
        check=True,
        cwd=args.work,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
