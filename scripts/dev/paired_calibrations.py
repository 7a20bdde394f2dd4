"""Calibrations of the conformal paired interval tried exactly on a held-out run's pairs (issue 56).

    python scripts/dev/paired_calibrations.py results --out paired_calibrations.csv

Reads every cell of the held-out test (``results/runs/heldout_intervals/<dataset>/<method>/
n=<budget>.pairs.parquet`` and its fits' ``n=<budget>.calibration_pairs.parquet``), makes each pair's
conformal interval again under each calibration below with
:func:`benchcast.studies.heldout_intervals.pairs.conformal_again` (no fitting: the same pairs, the same
calibration pairs), and writes one row per cell, calibration and kind of pairs (``all``, ``nearest``,
``alike``, ``family``): coverage and the median paired half-width over the unpaired one. Printed: per
calibration and kind, the cells within 85-95% (below / above). Random-Sampling and AIPW are left out
(``compare`` gives them an interval of their own).

The calibrations (:mod:`benchcast.new_model.compare`): ``compare`` (what it does: bands of the true
difference where each holds :data:`~benchcast.new_model.compare.TRUTH_BAND_PAIRS`, else bands of
``differing``); ``differing`` (bands of ``differing`` always); ``truth_5x20`` and ``truth_3x50``
(bands of the truth of 20 / 50 pairs at least); ``one`` (one quantile for all pairs).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.new_model.compare import PairedCalibration, paired_calibration, paired_quantile
from benchcast.studies.heldout_intervals.pairs import conformal_again

CALIBRATIONS = {
    "compare": paired_calibration,
    "differing": lambda p, level: paired_calibration(p, level, band_pairs=len(p) + 1),
    "truth_5x20": lambda p, level: paired_calibration(p, level, bands=5, band_pairs=20),
    "truth_3x50": lambda p, level: paired_calibration(p, level, bands=3, band_pairs=50),
    "one": lambda p, level: PairedCalibration((), (paired_quantile(p, level),)),
}
OWN_INTERVAL = ("random_sampling", "aipw")


def cells(results: Path):
    for path in sorted((results / "runs" / "heldout_intervals").glob("*/*/n=*.calibration_pairs.parquet")):
        dataset, method, budget = path.parent.parent.name, path.parent.name, int(path.name[2:].split(".")[0])
        if method not in OWN_INTERVAL:
            yield dataset, method, budget, path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the results folder of a held-out run")
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = []
    for dataset, method, budget, path in cells(args.results):
        calibration = pd.read_parquet(path)
        pairs = pd.read_parquet(path.with_name(path.name.replace(".calibration_pairs", ".pairs")))
        for name, calibrate in CALIBRATIONS.items():
            again = conformal_again(pairs, calibration, args.level, calibrate)
            covered = (again.conformal_lower <= again.truth_diff) & (again.truth_diff <= again.conformal_upper)
            ratio = (again.conformal_upper - again.conformal_lower) / 2 / again.unpaired_halfwidth
            for kind in ("all", "nearest", "alike", "family"):
                chosen = np.ones(len(pairs), bool) if kind == "all" else pairs[kind].to_numpy(bool)
                if chosen.any():
                    rows.append(
                        {
                            "dataset": dataset,
                            "method": method,
                            "budget": budget,
                            "calibration": name,
                            "pairs_kind": kind,
                            "pairs": int(chosen.sum()),
                            "coverage": float(covered[chosen].mean()),
                            "width_ratio": float(ratio[chosen].median()),
                        }
                    )
    table = pd.DataFrame(rows)
    table.to_csv(args.out, index=False, float_format="%.4f")
    for (name, kind), group in table.groupby(["calibration", "pairs_kind"], sort=False):
        within = group.coverage.between(0.85, 0.95).sum()
        print(
            f"{name:11s} {kind:8s} {within}/{len(group)} within 85-95% "
            f"({(group.coverage < 0.85).sum()} below / {(group.coverage > 0.95).sum()} above), "
            f"median width ratio {group.width_ratio.median():.2f}"
        )


if __name__ == "__main__":
    main()
