"""``benchcast select``: the items a new model should answer (then ``benchcast estimate``, :mod:`benchcast.cli.estimate`).

::

    benchcast select musr --method random_sampling --budget 50 --out items.csv
    #   ... run the model on those items, write 1/0 in items.csv's score column ...
    benchcast estimate musr --method random_sampling --answers items.csv --out estimate.json

``DATASET`` is a catalog dataset ingested under ``--data-dir`` (default ``results``: its
``data/<dataset>/`` tables) or the path of your own models x items matrix (CSV/Parquet, first
column ``model_id``, other columns item ids, scores in [0, 1]: 0/1, or partial credit). Adaptive methods (``tailoredbench``)
select in batches: run ``select`` again with ``--answers`` (the answers so far) until it says
the selection is complete. The first call for a dataset, method and budget builds the fit and
its calibration under ``<data-dir>/models/`` (the workflow's ``heldout_intervals`` study builds them ahead).
"""

from __future__ import annotations

from pathlib import Path

from benchcast.cli.common import (
    add_item_level,
    add_out,
    check_out,
    command_line,
    cores,
    json_params,
    log,
    next_round_name,
    read_given,
    resolve_method,
    write_csv,
)
from benchcast.errors import DataError


def add_parser(sub) -> None:
    s = sub.add_parser("select", help="the items a new model should answer (item-level methods)")
    add_item_level(s)
    s.add_argument("--budget", type=int, required=True, help="how many items the model may answer")
    s.add_argument(
        "--answers",
        nargs="+",
        metavar="PATH",
        help="answers so far, for the next batch of adaptive methods: every round's CSV (item_id,score) or JSON "
        "file, or lm-evaluation-harness logs (output folders or samples_*.jsonl files; several add up)",
    )
    s.add_argument(
        "--format",
        choices=("csv", "lm-eval"),
        default="csv",
        help="csv: item_id, subtask, selection_id and a blank score column to fill in; lm-eval: the harness's "
        "--samples JSON (leaf task -> document indices), with the lm-eval command to run on the console",
    )
    add_out(s, "the file to write (CSV, or JSON with --format lm-eval)", required=True)


def run(args) -> int:
    if args.out in (args.answers or []):  # (the more useful fix of the two: the next round's name)
        raise DataError(
            args.out,
            "--out",
            "is also one of --answers",
            f"write the batch elsewhere, e.g. --out {next_round_name(args.out, args.answers)}",
        )
    check_out(args.out, "samples.json" if args.format == "lm-eval" else "items.csv", args.overwrite)  # before any fit
    if args.format == "lm-eval":
        return _run_lm_eval(args)
    from benchcast.new_model import select
    from benchcast.new_model.leaderboard import load_leaderboard

    board = load_leaderboard(args.dataset, args.data_dir)  # read once: harness-log answers need it too
    resolve_method(args, board, args.budget)
    sel = select(
        board,
        args.method,
        args.budget,
        read_given(args, board),
        params=json_params(args.params),
        data_dir=args.data_dir,
        seed=args.seed,
        folds=args.folds,
        log=log,
        cores=cores(args),
    )
    out, so_far = args.out, list(args.answers or [])
    items = sel.items.assign(score="")
    write_csv(items, out)
    if sel.complete:
        print(
            f"selection {sel.selection_id} is complete: all {sel.answered} items the method asks for are answered "
            f"(wrote an empty {out}); run:\n  {command_line('estimate', args, sel.budget, so_far)}"
        )
        return 0
    if sel.answered + len(items) >= sel.budget:
        then = command_line("estimate", args, sel.budget, [*so_far, out])
    else:  # an adaptive method asks again once it has this batch's answers
        nxt = next_round_name(out, so_far)
        then = command_line("select", args, sel.budget, [*so_far, out], "--out", nxt)
        then += f"\n(adaptive: {args.method} asks in rounds; keep every round's file in --answers)"
    how = (
        "1 (correct) or 0 (wrong)"
        if board.binary
        else "each item's score in [0, 1] (this leaderboard's partial credit)"
    )
    print(
        f"wrote {len(items)} items to {out} (selection {sel.selection_id}; {sel.answered} answered before, "
        f"budget {sel.budget}). Run the model on them, write {how} in the score column, then:\n  {then}"
    )
    return 0


def _run_lm_eval(args) -> int:
    """``--format lm-eval``: the next batch as the harness's ``--samples`` file."""
    from benchcast.data.harness_identity import harness_map, require_usable
    from benchcast.lm_eval.samples import harness_command, samples_of, write_samples
    from benchcast.new_model.api import next_items, stored_fit
    from benchcast.new_model.leaderboard import load_leaderboard

    board = load_leaderboard(args.dataset, args.data_dir)
    hmap = require_usable(harness_map(board))  # before any fit is built
    resolve_method(args, board, args.budget)
    params = json_params(args.params)
    board, fit = stored_fit(
        board, args.method, args.budget, params, args.data_dir, args.seed, args.folds, log, cores(args)
    )
    given = read_given(args, board)
    sel = next_items(board, fit, board.answers(given if given is not None else {}))
    samples = samples_of(sel.items, hmap, board.matrix.item_ids)
    out, so_far = Path(args.out), list(args.answers or [])
    if sel.complete:
        print(
            f"selection {sel.selection_id} is complete: all {sel.answered} items the method asks for are answered "
            f"(no {out} written); run:\n  {command_line('estimate', args, sel.budget, so_far)}"
        )
        return 0
    write_samples(samples, out)
    whole = sel.answered == 0 and len(sel.items) >= sel.budget  # one batch: no rounds to tell apart
    output_path = "lm_eval_out" if whole else f"lm_eval_out/round{len(so_far) + 1}"
    if sel.answered + len(sel.items) >= sel.budget:
        then = command_line("estimate", args, sel.budget, [*so_far, output_path])
    else:
        nxt = next_round_name(args.out, so_far)
        then = command_line("select", args, sel.budget, [*so_far, output_path], "--format", "lm-eval", "--out", nxt)
        then += f"\n(adaptive: {args.method} asks in rounds; keep every round's logs in --answers)"
    if hmap.identity == "assumed":
        log(f"note: the harness identity of {hmap.dataset}'s items is assumed ({hmap.caveat})")
    print(
        f"wrote {len(sel.items)} documents of {len(samples)} tasks to {out} (selection {sel.selection_id}; "
        f"{sel.answered} answered before, budget {sel.budget}). Run them in lm-evaluation-harness (no "
        f"--cache_requests: it ignores --samples, harness issue #4105):\n  "
        f"{harness_command(samples, out, hmap, output_path)}\nthen:\n  {then}"
    )
    return 0
