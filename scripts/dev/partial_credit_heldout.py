"""Held-out intervals on a leaderboard of partial credit built from real answers (issue 56, item 4).

    python scripts/dev/partial_credit_heldout.py --dataset musr --data-dir /path/to/results \
        --methods random_sampling aipw --budgets 50 100 --out partial_credit.csv

    python scripts/dev/partial_credit_heldout.py --board board.parquet --methods ... --out f1.csv

``--board``: a leaderboard of partial credit as it is (a CSV or Parquet, e.g. what
``benchcast leaderboard from-lm-eval --metric f1`` wrote; ``scripts/dev/harness_f1_board.py`` makes one
from the real harness). Otherwise no mirrored benchmark scores its items in [0, 1], so the leaderboard is made from a real 0/1 one:
each run of ``--parts`` consecutive items of one subtask becomes one item scored by the share of its
parts answered right (a question with three graded parts: 0, 1/3, 2/3 or 1), written as a user's
CSV. Every model then plays a new model through the command line's own functions
(:func:`benchcast.studies.heldout_intervals.heldout.heldout`, ``--outer-folds`` folds of models), and
the table gives each method's coverage of the 90% interval, its mean width and MAE; a method defined
for 0/1 scores only is listed with the one line that refuses it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.errors import BenchcastError
from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.studies.heldout_intervals.heldout import heldout, summarise


def partial_credit(board, parts: int) -> pd.DataFrame:
    """Runs of ``parts`` consecutive items of one subtask, each scored by its share answered right."""
    scores, subtasks = board.matrix.scores, np.asarray(board.matrix.subtasks)
    columns = {}
    for subtask in dict.fromkeys(subtasks):
        idx = np.flatnonzero(subtasks == subtask)
        for k in range(len(idx) // parts):
            group = idx[k * parts : (k + 1) * parts]
            columns[f"{subtask}/{k}"] = scores[:, group].mean(axis=1)
    table = pd.DataFrame(columns)
    table.insert(0, "model_id", board.matrix.model_ids)
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="musr")
    ap.add_argument("--board", type=Path, help="a leaderboard of partial credit to test as it is")
    ap.add_argument("--data-dir", default="results")
    ap.add_argument("--parts", type=int, default=3)
    ap.add_argument("--methods", nargs="+", default=["random_sampling", "aipw"])
    ap.add_argument("--budgets", nargs="+", type=int, default=[50, 100])
    ap.add_argument("--outer-folds", type=int, default=10)
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    source = load_leaderboard(args.dataset, args.data_dir) if args.board is None else None
    with tempfile.TemporaryDirectory() as tmp:
        if args.board is None:
            csv = Path(tmp) / f"{args.dataset}_partial.csv"
            partial_credit(source, args.parts).to_csv(csv, index=False)
            what = f"{args.dataset}, {args.parts} parts per item"
        else:
            csv, what = args.board, args.board.name
        board = load_leaderboard(str(csv), Path(tmp) / "d")
        n_models, n_items = board.matrix.shape
        rows = []
        for method in args.methods:
            for budget in args.budgets:
                t0 = time.perf_counter()
                try:
                    held = heldout(
                        board, method, None, budget, 0, args.folds, args.outer_folds, 0.9, log=lambda _: None
                    )
                    row = summarise(held)
                except BenchcastError as exc:
                    row = {"refused": str(exc)}
                row.update(method=method, budget=budget, seconds=round(time.perf_counter() - t0, 1))
                print(row, flush=True)
                rows.append(row)
                table = pd.DataFrame(rows)  # written after every cell: a stopped run keeps what it measured
                table.insert(0, "leaderboard", f"{what}: {n_models} x {n_items}")
                table.to_csv(args.out, index=False)
    print(table.to_markdown(index=False, floatfmt=".3g"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
