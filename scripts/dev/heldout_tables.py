"""The held-out test's ``paired.csv`` and ``auto.csv`` from a run's files, without its stored fits.

    python scripts/dev/heldout_tables.py results --seed 1 --out tables/

The tables job (``hi_tables``) also needs every cell's deployable fit and its command-line seconds;
a run of the held-out test alone (its cells' ``n=<budget>.calibration.parquet`` as targets, e.g. at
another ``seed``) has none. This makes the two tables that need only the held-out files, with the
tables job's own functions (:func:`~benchcast.studies.heldout_intervals.pairs.paired_table`,
:func:`~benchcast.studies.heldout_intervals.auto.auto_table` without the seconds).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from benchcast.output.tables import write_table
from benchcast.studies.heldout_intervals.auto import auto_table
from benchcast.studies.heldout_intervals.pairs import paired_table

DATASET_ORDER = ("musr", "ifeval", "arc_challenge", "gsm")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the results folder of a held-out run")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed (the bootstrap's)")
    parser.add_argument("--out", type=Path, required=True, help="a folder")
    args = parser.parse_args()
    found = (args.results / "runs" / "heldout_intervals").glob("*/*/n=*.calibration.parquet")
    paths = {(p.parent.parent.name, p.parent.name, int(p.name[2:].split(".")[0])): p for p in found}
    rank = {d: i for i, d in enumerate(DATASET_ORDER)}
    cells = sorted(paths, key=lambda c: (rank.get(c[0], len(rank)), c[0], c[1], c[2]))
    rows, calibrations, pairs = [], [], []
    for cell in cells:
        path = paths[cell]
        calibrations.append(pd.read_parquet(path))
        rows.append(pd.read_parquet(path.with_name(path.name.replace(".calibration", ""))))
        pairs.append(pd.read_parquet(path.with_name(path.name.replace(".calibration", ".pairs"))))
    args.out.mkdir(parents=True, exist_ok=True)
    write_table(paired_table(cells, pairs), csv=args.out / "paired.csv")
    write_table(auto_table(cells, rows, seed=args.seed, calibrations=calibrations), csv=args.out / "auto.csv")
    print(f"{len(cells)} cells: {args.out / 'paired.csv'}, {args.out / 'auto.csv'}")


if __name__ == "__main__":
    main()
