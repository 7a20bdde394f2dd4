"""``benchcast estimate``: a new model's full-benchmark score from its answers to the items
``benchcast select`` chose (:mod:`benchcast.cli.select`), with an interval and its rank among the
leaderboard's models."""

from __future__ import annotations

import json
from pathlib import Path

from benchcast.cli.common import add_item_level, json_params, log


def add_parser(sub) -> None:
    e = sub.add_parser("estimate", help="a new model's full-benchmark score from its answers, with an interval")
    add_item_level(e)
    e.add_argument("--answers", required=True, help="CSV (item_id,score[,selection_id]) or JSON ({item_id: score})")
    e.add_argument(
        "--budget", type=int, help="the budget selected with (default: the selection_id's, else the number of answers)"
    )
    e.add_argument("--level", type=float, default=0.9, help="interval level (default 0.9)")
    e.add_argument(
        "--interval",
        choices=("auto", "own", "conformal"),
        default="auto",
        help="the method's own interval (AIPW's central-limit one) or split-conformal; auto: its own where it has one",
    )
    e.add_argument("--out", help="also write the result as JSON here")


def run(args) -> int:
    from benchcast.new_model import estimate

    result = estimate(
        args.dataset,
        args.method,
        args.answers,
        budget=args.budget,
        level=args.level,
        interval=args.interval,
        params=json_params(args.params),
        data_dir=args.data_dir,
        seed=args.seed,
        folds=args.folds,
        log=log,
    )
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(out)
    r = result
    print(
        f"{r['dataset']}, {r['method']} from {r['items_used']} items: {100 * r['estimate']:.1f}% "
        f"[{100 * r['lower']:.1f}, {100 * r['upper']:.1f}] ({r['level']:.0%} interval); rank {r['rank']} of "
        f"{r['models'] + 1} [{r['rank_best']}, {r['rank_worst']}]\ninterval: {r['interval']}"
    )
    return 0
