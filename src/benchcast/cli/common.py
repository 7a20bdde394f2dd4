"""What the subcommands share: argument types, the results folder, JSON settings, the log."""

from __future__ import annotations

import argparse
import json
import sys

from benchcast.errors import ConfigError

#: the workflow's results folder; every subcommand's ``--data-dir`` means this folder
DEFAULT_DATA_DIR = "results"


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def add_data_dir(p) -> None:
    p.add_argument(
        "--data-dir",
        default=DEFAULT_DATA_DIR,
        help=f"the workflow's results folder (default {DEFAULT_DATA_DIR}): datasets under data/, fits under models/",
    )


def json_params(text: str | None) -> dict | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--params is not JSON ({exc.msg}); fix: e.g. --params '{{\"alpha\": 10}}'") from None
    if not isinstance(value, dict):
        raise ConfigError("--params must be a JSON object, e.g. --params '{\"alpha\": 10}'")
    return value


def add_item_level(p) -> None:
    """The arguments ``select`` and ``estimate`` share."""
    p.add_argument("dataset", help="a catalog dataset (ingested under --data-dir) or a models x items CSV/Parquet")
    p.add_argument("--method", required=True, help="an item-level method of the registry, e.g. random_sampling")
    p.add_argument("--params", help="the method's settings as JSON (default: the registry's defaults)")
    add_data_dir(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the fit and the selection (default 0)")
    p.add_argument("--folds", type=int, default=10, help="folds of models calibrating the intervals (default 10)")


def log(text: str) -> None:
    print(text, file=sys.stderr)


def add_listing(p) -> None:
    """The options every listing command (``benchmarks``, ``datasets``, ``methods``) shares."""
    p.add_argument("--grep", help="only rows containing this text (case-insensitive)")
    p.add_argument("--out", help="also write the list as CSV here")


def print_listing(table, args) -> int:
    """A listing's table, filtered by ``--grep``, printed and written to ``--out``."""
    if args.grep:
        hay = table.apply(lambda r: " ".join(map(str, r)), axis=1).str.lower()
        table = table[hay.str.contains(args.grep.lower(), regex=False)]
        if table.empty:
            print(f"no row contains {args.grep!r}", file=sys.stderr)
    if args.out:
        table.to_csv(args.out, index=False, float_format="%.4g")
    print(as_text(table))
    return 0


def as_text(table) -> str:
    """A table as aligned plain text: text columns to the left, numbers to the right."""
    import pandas as pd

    cells, right = {}, {}
    for c in table.columns:
        numeric = pd.api.types.is_numeric_dtype(table[c])
        cells[c] = [f"{v:.4g}" if numeric and isinstance(v, float) else str(v) for v in table[c]]
        right[c] = numeric
    width = {c: max([len(str(c)), *map(len, cells[c])]) for c in table.columns}

    def line(values) -> str:
        return "  ".join(f"{v:>{width[c]}}" if right[c] else f"{v:<{width[c]}}" for c, v in zip(table.columns, values))

    rows = [line(table.columns)] + [line(r) for r in zip(*(cells[c] for c in table.columns))]
    return "\n".join(r.rstrip() for r in rows)


def harness_logs(paths: list[str] | None) -> bool:
    """Whether ``--answers`` names lm-evaluation-harness logs (folders, ``.jsonl`` files, or
    several paths) rather than one CSV/JSON answers file."""
    from pathlib import Path

    if not paths:
        return False
    return len(paths) > 1 or Path(paths[0]).is_dir() or paths[0].lower().endswith(".jsonl")


def read_given(args, board=None):
    """``--answers`` as :func:`benchcast.new_model.api.select` takes them: None, a file's path, or
    (harness logs) the answers read against ``board`` (loaded here when not given)."""
    if not harness_logs(args.answers):
        return args.answers[0] if args.answers else None
    from benchcast.lm_eval.identity import harness_map, require_usable
    from benchcast.lm_eval.logs import read_logs
    from benchcast.new_model.leaderboard import load_leaderboard

    board = board if board is not None else load_leaderboard(args.dataset, args.data_dir)
    return read_logs(args.answers, require_usable(harness_map(board)))
