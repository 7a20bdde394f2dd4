"""``benchcast leaderboard from-lm-eval``: a leaderboard of your own models from their
lm-evaluation-harness logs (:mod:`benchcast.lm_eval.board`).

::

    benchcast leaderboard from-lm-eval runs/ --out board.parquet
    benchcast select board.parquet --method random_sampling --budget 50 --format lm-eval --out samples.json

Every folder under the given paths that holds ``samples_*.jsonl`` files is one model; its items are
``<task>/<doc_id>``, scored by the metric and filter printed (choose others with ``--metric`` /
``--filter``). The Parquet file is a leaderboard ``select``, ``estimate`` and ``plan`` take.
"""

from __future__ import annotations

from benchcast.cli.common import add_out


def add_parser(sub) -> None:
    p = sub.add_parser("leaderboard", help="build a leaderboard of your own models (from lm-evaluation-harness logs)")
    how = p.add_subparsers(dest="source", required=True, metavar="SOURCE")
    h = how.add_parser("from-lm-eval", help="from the harness's --log_samples output: one folder per model")
    h.add_argument("paths", nargs="+", metavar="DIR", help="harness --output_path folders (or model folders)")
    add_out(h, "the leaderboard to write (.parquet)", required=True)
    h.add_argument(
        "--metric",
        action="append",
        metavar="[TASK=]METRIC",
        help="the metric of every task, or of one task (repeatable): 0/1, or partial credit in [0, 1] such as f1; default: the first metric the log lists",
    )
    h.add_argument(
        "--filter",
        action="append",
        metavar="[TASK=]FILTER",
        help="the filter whose lines count (repeatable); default: the first filter the log holds (the config's order)",
    )
    h.add_argument(
        "--missing",
        choices=("refuse", "drop-models", "drop-items"),
        default="refuse",
        help="when some models lack some items: refuse (default), drop those models, or keep only the items all have",
    )


def run(args) -> int:
    from benchcast.cli.common import check_out
    from benchcast.lm_eval.board import build_board, write_board

    check_out(args.out, "board.parquet", args.overwrite)
    board = build_board(args.paths, args.metric, args.filter, args.missing)
    out = write_board(board, args.out)
    models, items = board.scores.shape[0], board.scores.shape[1] - 1
    for line in board.report:
        print(line)
    dropped = (f"; dropped {len(board.dropped_models)} models missing items" if board.dropped_models else "") + (
        f"; dropped {board.dropped_items} items some model lacks" if board.dropped_items else ""
    )
    print(f"wrote {out}: {models} models x {items} items of {len(board.facts['tasks'])} tasks{dropped}")
    return 0
