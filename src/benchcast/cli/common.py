"""What the subcommands share: argument types, the results folder, JSON settings, the log."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from benchcast.errors import ConfigError, DataError

#: the workflow's results folder: the data folder where it holds datasets (a clone that ran the workflow)
WORKFLOW_RESULTS = "results"
#: the environment variable that names the data folder instead of the default
DATA_DIR_VARIABLE = "BENCHCAST_DATA_DIR"
#: calibration folds of a fit (``--folds``), as :data:`benchcast.new_model.fits.DEFAULT_FOLDS`
DEFAULT_FOLDS = 10


#: what a DATASET argument is (select, estimate, plan), in the README's words
DATASET_HELP = "a catalog dataset (ingested under --data-dir), or a models x items CSV/Parquet (first column model_id, then one column per item: scores in [0, 1], 0/1 or partial credit)"


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def default_data_dir() -> str:
    """Where datasets (``data/``) and fits (``models/``) live unless ``--data-dir`` says: the folder
    ``$BENCHCAST_DATA_DIR`` names; else the workflow's ``results`` where it holds datasets (in a
    clone that ran the workflow); else the per-user cache folder of the platform (platformdirs:
    ``~/.cache/benchcast`` on Linux), where ``benchcast fetch`` puts datasets."""
    if os.environ.get(DATA_DIR_VARIABLE):
        return os.environ[DATA_DIR_VARIABLE]
    if os.path.isdir(os.path.join(WORKFLOW_RESULTS, "data")):
        return WORKFLOW_RESULTS
    import platformdirs

    return platformdirs.user_cache_dir("benchcast", appauthor=False)


def add_data_dir(p) -> None:
    p.add_argument(
        "--data-dir",
        help="the folder of datasets (data/) and fits (models/); default: $BENCHCAST_DATA_DIR, else the workflow's "
        "results folder where it holds datasets, else the per-user cache (benchcast fetch puts datasets there)",
    )


def resolve_data_dir(args) -> None:
    """``args.data_dir`` filled in with :func:`default_data_dir` when not given (``args.data_dir_given``
    says which, so that a printed command repeats only what the user typed)."""
    if hasattr(args, "data_dir"):
        args.data_dir_given = args.data_dir is not None
        if args.data_dir is None:
            args.data_dir = default_data_dir()


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
    p.add_argument("dataset", help=DATASET_HELP)
    p.add_argument(
        "--method",
        required=True,
        help="an item-level method of the registry, e.g. random_sampling; auto: the one with the lowest held-out "
        "error at this budget on this leaderboard (of --candidates)",
    )
    p.add_argument(
        "--candidates",
        nargs="+",
        metavar="METHOD",
        help="the methods --method auto chooses among (default: every built-in method that takes the leaderboard's "
        "scores at this budget; its first call builds each one's fit)",
    )
    p.add_argument("--params", help="the method's settings as JSON (default: the registry's defaults)")
    add_data_dir(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the fit and the selection (default 0)")
    p.add_argument(
        "--folds",
        type=int,
        default=DEFAULT_FOLDS,
        help=f"folds of models calibrating the intervals (default {DEFAULT_FOLDS})",
    )
    p.add_argument(
        "--cores",
        type=positive_int,
        default=None,
        help="processes calibrating a fit the first call builds (default: every core this process may use); "
        "the fit is the same whatever the number",
    )


def resolve_method(args, board, budget: int | None) -> None:
    """``--method auto``: ``args.method`` becomes the candidate with the lowest held-out error at
    ``budget`` on ``board`` (:mod:`benchcast.new_model.auto`), said on stderr with the runner-up;
    the command's next-step line then names it."""
    from benchcast.new_model.auto import AUTO, choose_method

    if args.method != AUTO:
        if args.candidates:
            raise ConfigError("--candidates goes with --method auto; fix: drop it, or use --method auto")
        return
    if args.params:
        raise ConfigError("--params sets one method's settings; fix: with --method auto, drop --params")
    if budget is None:
        raise ConfigError("--method auto chooses at a budget; fix: pass the --budget you ran select with")
    choice = choose_method(board, budget, args.candidates, args.data_dir, args.seed, args.folds, log, cores(args))
    log(choice.reason(budget))
    args.method = choice.method


def cores(args) -> int:
    """``--cores``, or every core this process may use."""
    from benchcast.new_model.fits import available_cores

    return args.cores or available_cores()


def add_out(p, help: str, required: bool = False) -> None:
    """``--out`` and ``--overwrite`` (:func:`check_out`)."""
    p.add_argument("--out", required=required, help=help)
    p.add_argument(
        "--overwrite", action="store_true", help="write --out even where it holds answers (which are then lost)"
    )


def answers_held(path) -> int:
    """How many scores a file of answers (``item_id,score`` CSV, or JSON ``{item_id: score}`` or
    records) at ``path`` holds filled in; 0 for any other file."""
    import json
    from pathlib import Path

    from benchcast.data.score_entries import read_score_entries
    from benchcast.errors import BenchcastError

    path = Path(path)
    if not path.is_file() or path.suffix.lower() not in (".csv", ".json"):
        return 0
    try:
        entries = read_score_entries(path, "item_id", "item")
    except (BenchcastError, OSError, ValueError):
        return 0
    values = [v for _, v, _, _ in entries]
    if path.suffix.lower() == ".json":  # an object of results (estimate's) is not answers: every value a score
        numbers = all(isinstance(v, bool | int | float) or (isinstance(v, str) and _is_number(v)) for v in values)
        if not numbers or not json.loads(path.read_text(encoding="utf-8-sig") or "null"):
            return 0
    return sum(1 for v in values if v is not None and str(v).strip() != "")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_out(path: str | None, example: str, overwrite: bool = False) -> None:
    """Refuse an ``--out`` that cannot be written -- a folder, a file under a file, a folder this
    process may not write in -- or that holds a person's answers (unless ``overwrite``), before any
    work (a fit may take minutes). ``example``: a file name to suggest."""
    from pathlib import Path

    if not path:
        return
    out = Path(path)
    if path.endswith(("/", os.sep)) or out.is_dir():
        raise DataError(path, "--out", "is a folder, not a file", f"name a file, e.g. --out {out / example}")
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise DataError(path, "--out", f"{parent} is a file, not a folder", "name a file in a folder")
    existing = next((p for p in out.absolute().parents if p.exists()), None)
    try:  # a file made and gone at once: what the write will need (permissions alone do not say it: root, /proc)
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise DataError(
            path, "--out", f"cannot be written in {existing} ({exc.strerror})", "name a file in a folder you can write"
        ) from None
    held = 0 if overwrite else answers_held(out)
    if held:
        raise DataError(
            path,
            "--out",
            f"holds {held} answers (scores filled in): writing there would lose them",
            f"continue from them with --answers {path} and another --out, or add --overwrite to replace the file",
        )


def write_csv(table, path, **kwargs) -> None:
    """``table`` as CSV at ``path``, through a temporary file (never half a file, nor a stray one)."""
    from benchcast.data.io import atomic_path

    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False, **kwargs)


def log(text: str) -> None:
    """A progress line on stderr, written with its newline in one call: ``print`` writes the two
    apart, and a Ctrl-C or SIGTERM between them put the command's last line after the text."""
    sys.stderr.write(f"{text}\n")


def command_line(command: str, args, budget: int, answers: list[str], *more: str) -> str:
    """The ``benchcast`` command that continues this one, as a shell would take it: the same
    dataset, method and settings (``--params``, ``--data-dir``, ``--seed``, ``--folds`` where
    given), ``--budget``, ``--answers`` naming every answers file, then ``more``."""
    import shlex

    parts = ["benchcast", command, args.dataset, "--method", args.method, "--budget", str(budget)]
    if args.params:
        parts += ["--params", args.params]
    if getattr(args, "data_dir_given", True):
        parts += ["--data-dir", args.data_dir]
    if args.seed != 0:
        parts += ["--seed", str(args.seed)]
    if args.folds != DEFAULT_FOLDS:
        parts += ["--folds", str(args.folds)]
    return shlex.join([*parts, "--answers", *answers, *more])


def next_round_name(out: str, taken: list[str]) -> str:
    """A file name for the next round's batch beside ``out``: ``items.csv`` -> ``items.round2.csv``,
    ``items.round2.csv`` -> ``items.round3.csv`` (never one of ``taken``)."""
    import re
    from pathlib import Path

    path = Path(out)
    m = re.fullmatch(r"(.*)\.round(\d+)", path.stem)
    stem, k = (m.group(1), int(m.group(2)) + 1) if m else (path.stem, 2)
    while (name := str(path.with_name(f"{stem}.round{k}{path.suffix}"))) in taken or name == out:
        k += 1
    return name


def add_listing(p) -> None:
    """The options every listing command (``benchmarks``, ``datasets``, ``methods``) shares."""
    p.add_argument("--grep", help="only rows containing this text (case-insensitive)")
    p.add_argument("--out", help="also write the list as CSV here")
    p.add_argument("--json", action="store_true", help="print the list as a JSON array of objects (the same columns)")


def print_listing(table, args) -> int:
    """A listing's table, filtered by ``--grep``, printed (as text, or ``--json``) and written to ``--out``."""
    check_out(args.out, "list.csv")
    if args.grep:
        hay = table.apply(lambda r: " ".join(map(str, r)), axis=1).str.lower()
        table = table[hay.str.contains(args.grep.lower(), regex=False)]
        if table.empty:
            print(f"no row contains {args.grep!r}", file=sys.stderr)
    if args.out:
        write_csv(table, args.out, float_format="%.4g")
    print(table.to_json(orient="records", indent=1) if args.json else as_text(table))
    return 0


def as_text(table) -> str:
    """A table as aligned plain text: text columns to the left, numbers to the right."""
    import pandas as pd

    cells, right = {}, {}
    for c in table.columns:
        numeric = pd.api.types.is_numeric_dtype(table[c])
        cells[c] = [
            "" if pd.isna(v) else f"{v:.4g}" if numeric and isinstance(v, float) else str(v) for v in table[c]
        ]  # NaN / NA: not known, a blank
        right[c] = numeric
    width = {c: max([len(str(c)), *map(len, cells[c])]) for c in table.columns}

    def line(values) -> str:
        return "  ".join(f"{v:>{width[c]}}" if right[c] else f"{v:<{width[c]}}" for c, v in zip(table.columns, values))

    rows = [line(table.columns)] + [line(r) for r in zip(*(cells[c] for c in table.columns))]
    return "\n".join(r.rstrip() for r in rows)


def harness_logs(paths: list[str] | None) -> bool:
    """Whether ``--answers`` names lm-evaluation-harness logs (folders or ``.jsonl`` files) rather
    than CSV/JSON answer files; a mix of both is refused."""
    from pathlib import Path

    logs = [Path(p).is_dir() or p.lower().endswith(".jsonl") for p in paths or []]
    if any(logs) and not all(logs):
        first = paths[logs.index(False)]
        raise DataError(
            first,
            "--answers",
            "a CSV/JSON answers file among lm-evaluation-harness logs",
            "pass either the answer files of every round (CSV/JSON) or the harness logs of every round",
        )
    return bool(logs) and all(logs)


def read_given(args, board=None):
    """``--answers`` as :func:`benchcast.new_model.api.select` takes them: None, a file's path,
    several (an adaptive method's rounds), or (harness logs) the answers read against ``board``
    (loaded here when not given)."""
    if not harness_logs(args.answers):
        if not args.answers:
            return None
        return args.answers[0] if len(args.answers) == 1 else list(args.answers)
    from benchcast.data.harness_identity import harness_map, require_usable
    from benchcast.lm_eval.logs import read_logs
    from benchcast.new_model.leaderboard import load_leaderboard

    board = board if board is not None else load_leaderboard(args.dataset, args.data_dir)
    return read_logs(args.answers, require_usable(harness_map(board)))
