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
