"""``benchcast compare``: two or more models' answers to one selection (``benchcast select``) give
each pairwise difference of full-benchmark scores with a paired interval and a verdict in words
(:mod:`benchcast.new_model.compare`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

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
    c = sub.add_parser(
        "compare",
        help="two or more models' answers to one selection: each difference with a paired interval and a verdict",
    )
    add_item_level(c)
    c.add_argument(
        "--answers",
        required=True,
        nargs="+",
        action="append",
        metavar="PATH",
        help="one model's answers, as estimate takes them (CSV/JSON files, one per round, or lm-evaluation-harness "
        "logs); give --answers once per model",
    )
    c.add_argument(
        "--names", nargs="+", help="the models' names, in the order of --answers (default: each first file's name)"
    )
    c.add_argument(
        "--budget", type=int, help="the budget selected with (default: the selection_id's, else the number of answers)"
    )
    c.add_argument("--level", type=float, default=0.9, help="interval level (default 0.9)")
    c.add_argument(
        "--interval",
        choices=["auto", "own", "conformal"],
        default="auto",
        help="the method's own paired interval (Random-Sampling's and AIPW's: the standard error of the two models' "
        "answer differences on the core set) or split-conformal on held-out pairs; auto: its own where it has one",
    )
    add_out(c, "also write the result as JSON here")


def model_names(answers: list[list[str]], names: list[str] | None) -> list[str]:
    """``--names``, else each model's first file or folder name without its extension."""
    if names is not None:
        if len(names) != len(answers):
            raise ConfigError(
                f"--names gives {len(names)} names for {len(answers)} models (--answers given {len(answers)} times); "
                "fix: one name per --answers"
            )
        chosen = list(names)
    else:
        chosen = [Path(paths[0].rstrip("/")).stem or paths[0] for paths in answers]
    twice = sorted({n for n in chosen if chosen.count(n) > 1})
    if twice:
        raise ConfigError(
            f"two models are named {twice[0]!r}; fix: name them with --names (e.g. --names base tuned)"
            if names is None
            else f"--names gives {twice[0]!r} twice; fix: one name per model"
        )
    return chosen


def run(args) -> int:
    from benchcast.new_model.compare import compare
    from benchcast.new_model.leaderboard import load_leaderboard

    check_out(args.out, "compare.json", args.overwrite)  # before any fit
    names = model_names(args.answers, args.names)
    board = load_leaderboard(args.dataset, args.data_dir)
    given = {
        name: read_given(argparse.Namespace(**{**vars(args), "answers": paths}), board)
        for name, paths in zip(names, args.answers)
    }
    resolve_method(args, board, args.budget)
    if args.budget is None and any(harness_logs(paths) for paths in args.answers):
        from benchcast.cli.estimate import harness_budget

        args.budget = harness_budget(args, board)
    result = compare(
        board,
        args.method,
        given,
        budget=args.budget,
        level=args.level,
        params=json_params(args.params),
        data_dir=args.data_dir,
        seed=args.seed,
        folds=args.folds,
        log=log,
        cores=cores(args),
        interval=args.interval,
    )
    if args.out:
        write_text_atomic(args.out, json.dumps(result, indent=1) + "\n")
    r = result
    print(f"{r['dataset']}, {r['method']} at n={r['budget']}:")
    for name, m in r["models"].items():
        print(f"  {name}: {100 * m['estimate']:.1f}% [{100 * m['lower']:.1f}, {100 * m['upper']:.1f}]")
    for pair in r["pairs"]:
        print(pair["verdict"])
    print(f"paired interval: {r['interval']}")
    return 0
