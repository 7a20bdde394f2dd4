"""``benchcast estimate``: a new model's full-benchmark score from its answers to the items
``benchcast select`` chose (:mod:`benchcast.cli.select`), with an interval and its rank among the
leaderboard's models."""

from __future__ import annotations

import json

from benchcast.cli.common import (
    add_item_level,
    add_out,
    check_out,
    cores,
    harness_logs,
    json_params,
    log,
    read_given,
    resolve_method,
)
from benchcast.data.io import write_text_atomic
from benchcast.errors import ConfigError


def add_parser(sub) -> None:
    e = sub.add_parser("estimate", help="a new model's full-benchmark score from its answers, with an interval")
    add_item_level(e)
    e.add_argument(
        "--answers",
        required=True,
        nargs="+",
        metavar="PATH",
        help="CSV (item_id,score[,selection_id]) or JSON ({item_id: score}) files, one per round of an adaptive "
        "method, or lm-evaluation-harness logs: its --output_path folder, one model's folder or samples_*.jsonl "
        "files (several add up)",
    )
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
    add_out(e, "also write the result as JSON here")


def run(args) -> int:
    from benchcast.new_model import estimate
    from benchcast.new_model.leaderboard import load_leaderboard

    check_out(args.out, "estimate.json", args.overwrite)  # before any fit
    board = load_leaderboard(args.dataset, args.data_dir)
    answers = read_given(args, board)
    resolve_method(args, board, args.budget)
    budget = args.budget if args.budget is not None or not harness_logs(args.answers) else harness_budget(args, board)
    result = estimate(
        board,
        args.method,
        answers,
        budget=budget,
        level=args.level,
        interval=args.interval,
        params=json_params(args.params),
        data_dir=args.data_dir,
        seed=args.seed,
        folds=args.folds,
        log=log,
        cores=cores(args),
    )
    result.update(_display(board, result))
    if args.out:
        write_text_atomic(args.out, json.dumps(result, indent=1) + "\n")
    r = result
    print(
        f"{r['dataset']}, {r['method']} from {r['items_used']} items: {100 * r['estimate']:.1f}% "
        f"[{100 * r['lower']:.1f}, {100 * r['upper']:.1f}] ({r['level']:.0%} interval); rank {r['rank']} of "
        f"{r['models'] + 1} [{r['rank_best']}, {r['rank_worst']}]\ninterval: {r['interval']}"
    )
    if "display" in r:
        d = r["display"]
        print(f"on the leaderboard's scale ({d['scale']}): {d['estimate']:.2f} [{d['lower']:.2f}, {d['upper']:.2f}]")
    return 0


def harness_budget(args, board) -> int:
    """Harness logs carry no selection id: the budget is the one stored fit's of this method on
    this leaderboard, else it must be given."""
    from benchcast.new_model.fits import stored_budget, stored_fits

    budget = stored_budget(args.data_dir, board, args.method)
    if budget is None:
        raise ConfigError(
            f"harness logs do not say which budget the items were selected with "
            f"({len(stored_fits(args.data_dir, board, args.method))} stored fits of {args.method} on {board.key}); "
            "fix: pass the --budget you ran select with"
        )
    return budget


def _display(board, result: dict) -> dict:
    """The estimate and its interval on the leaderboard's displayed scale, where it is known."""
    from benchcast.data.harness_identity import harness_map

    scale = harness_map(board).display
    if scale is None:
        return {}
    values = {k: scale(result[k]) for k in ("estimate", "lower", "upper")}
    return {"display": {"scale": scale.name, **values}}
