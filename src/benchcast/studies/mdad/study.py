"""MDAD (Yauney et al., "How Reliable is Language Model Micro-Benchmarking?") under the study contract."""

from __future__ import annotations

import pandas as pd

from benchcast.output.comparison import WIDENING, of_the_paper, words
from benchcast.stats.mdad import Criterion, per_trial_mdad
from benchcast.studies.contract import MethodEntry, Study, registry_entries
from benchcast.studies.mdad.analysis import PAPER_TRIALS, cell_counts
from benchcast.studies.mdad.jobs import RUN_GROUP, Jobs
from benchcast.studies.mdad.protocol import trial_metrics


class MDAD(Study):
    name = "mdad"
    title = "How Reliable is Language Model Micro-Benchmarking? (Yauney et al.)"
    paper = "../shared/papers/micro-benchmarking-reliability-mdad.txt"
    position = 50
    # its run jobs take seconds each, the IRT selector's minutes
    job_groups = {RUN_GROUP: 6}
    jobs_class = Jobs
    protocol_score = (
        "MDAD of a trial's micro-benchmark on the unseen half of the items (points: the smallest accuracy "
        "difference it ranks right 80% of the time); its estimation error and Kendall's tau beside it"
    )
    #: the half of the items the protocol scores on: the items no selector saw (Section 3)
    PROTOCOL_SPLIT = "unseen"

    @classmethod
    def method_entries(cls, config) -> list[MethodEntry]:
        return registry_entries([*config["methods"], *config.get("cross_paper", {}).get("methods", [])])

    def scope(self) -> str:
        cfg = self.config
        titles = [self.catalog[d].title for d in cfg["datasets"]]
        extras = [
            name
            for name, on in (
                ("the cross-paper methods", cfg["cross_paper"].get("methods")),
                ("fixed-percentage micro-benchmarks", any(v.get("datasets") for v in cfg["percent"].values())),
                ("same-size groups", cfg["same_size"].get("groups")),
            )
            if on
        ]
        return (
            (f"{len(titles)} benchmarks ({words(titles)}); " if len(titles) > 1 else f"{titles[0]}; ")
            + f"{len(cfg['methods'])} selectors; source models {words([str(n) for n in cfg['n_sources']])} "
            f"(the paper: 10 to 300); {of_the_paper(cfg['trials'], PAPER_TRIALS, 'trials')}"
            + (
                f"; with {words(extras)}"
                if extras
                else "; without the cross-paper methods, fixed-percentage micro-benchmarks and same-size groups"
            )
        )

    def index(self) -> dict:
        tol = self.config["tolerance"]
        tables, figures, percent = self.jobs.tables(), self.jobs.figures(), self.jobs.percent_outputs()
        return self.index_entry(
            "MDAD within {m} points (k = 25: {m25}; k = 10 reported), error {e} points, tau {t}; with fewer "
            "trials than the paper's {trials}: {widening}".format(
                m=tol["mdad"]["default"],
                m25=tol["mdad"]["by_k"].get(25),
                e=tol["error"],
                t=tol["tau"],
                trials=PAPER_TRIALS,
                widening=WIDENING,
            ),
            tables["paper_vs_ours"],
            [
                [
                    "Eqs. 4-5: MDAD and agreement per selector, source count and size",
                    [tables["mdad"], tables["agreement"]],
                ],
                ["Figure 4: estimation error and Kendall's tau", [tables["estimation"]]],
                [
                    "Figure 1: rank correlation and MDAD against size, agreement at a small and a large size",
                    [figures["figure1"]],
                ],
                ["Figures 3, 9: agreement curves and MDAD against size", [figures["figure3"]]],
                ["Figure 4: error, tau and MDAD rows", [figures["figure4"]]],
                ["Figures 6, 12: seen vs held-out half", [figures["figure6"]]],
                ["Figure 13: number of source models", [figures["figure13"]]],
                ["Figure 16: error, tau and MDAD per source count", [figures["figure16"]]],
                ["Table 5: seen vs held-out half, averaged over the sizes", [tables["table5"]]],
                [
                    "Across papers: every registry method on the same trials (no paper has this)",
                    [tables["cross_paper"], tables["cross_paper_summary"], figures["cross_paper"]],
                ],
                [
                    "Figures 7, 8: agreement thresholds and bin resolutions",
                    [tables["sensitivity"], figures["figure7"], figures["figure8"]],
                ],
                ["Table 2: seconds per trial (ours next to the paper's)", [tables["table2"]]],
                *(
                    [
                        [
                            "Figures 10, 17: micro-benchmarks of a fixed percentage, of each subtask and of the "
                            "whole benchmark",
                            list(percent.values()),
                        ]
                    ]
                    if percent
                    else []
                ),
                ["Table 3: MDAD against the number of trials", [tables["table3"]]],
            ],
        )

    def protocol_settings(self) -> dict:
        return dict(self.config["agreement"])

    @classmethod
    def protocol_trials(cls, frame, settings):
        """Per size ``k`` (the budget) and trial: the trial's MDAD on the unseen half
        (:func:`~benchcast.stats.mdad.per_trial_mdad` with config ``mdad.agreement``), its estimation
        error (points) and Kendall's tau."""
        criterion = Criterion.from_settings(settings)
        metrics = trial_metrics(frame)
        metrics = metrics[metrics["split"] == cls.PROTOCOL_SPLIT].set_index(["k", "trial"])
        parts = []
        for k, at_k in frame.groupby("k", sort=True):
            trials = sorted(at_k["trial"].unique())
            mdad = per_trial_mdad(cell_counts(at_k, cls.PROTOCOL_SPLIT, criterion.binning), criterion)
            m = metrics.loc[k].reindex(trials)
            parts.append(
                pd.DataFrame(
                    {
                        "budget": int(k),
                        "trial": [int(t) for t in trials],
                        "score": mdad,
                        "error": 100 * m["error"].to_numpy(),
                        "tau": m["tau"].to_numpy(),
                    }
                )
            )
        return pd.concat(parts, ignore_index=True)


STUDY = MDAD
