"""The "misses the mark" grid's trials as the measuring scripts beside this one read them."""

from __future__ import annotations

import argparse

import pandas as pd

from benchcast.data.item_level import load_response_matrix
from benchcast.trials.runner import splits_by_trial

DATASETS = "commonsense,gsm,legalbench,math,mmlu,mrpc,rte,qnli,ifeval,openllm_math,arc_challenge,musr"


def arguments(description: str, trials: int) -> argparse.ArgumentParser:
    """The options every grid measurement takes (add its own, then ``parse_args``)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--datasets", default=DATASETS)
    ap.add_argument("--splits", default="interpolation,extrapolation")
    ap.add_argument("--budgets", default="50,100,200")
    ap.add_argument("--trials", type=int, default=trials)
    ap.add_argument("--results", default="results", help="the workflow's results folder (data/, splits/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--summary", required=True)
    return ap


def trials(a: argparse.Namespace):
    """``(dataset, split, scores, trial, sources, targets)`` for the first ``a.trials`` trials of each."""
    for ds in a.datasets.split(","):
        matrix = load_response_matrix(f"{a.results}/data/{ds}")
        for split in a.splits.split(","):
            table = pd.read_parquet(f"{a.results}/splits/misses_the_mark/{ds}/{split}.parquet")
            by_trial = splits_by_trial(table, matrix)
            for t in sorted(by_trial)[: a.trials]:
                yield ds, split, matrix.scores, t, *by_trial[t]
            print(ds, split, "done", flush=True)
