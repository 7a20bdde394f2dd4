"""Collaborative filtering at task level (Zhong, Yi & Ye) under the study contract."""

from __future__ import annotations

import pandas as pd

from benchcast.errors import keyword_names
from benchcast.output.comparison import of_the_paper, words
from benchcast.studies.cf_tasks.jobs import RUN_GROUP, Jobs
from benchcast.studies.contract import MethodEntry, Study, registry_entries


class CFTasks(Study):
    name = "cf_tasks"
    title = "Efficient Evaluation of Large Language Models via Collaborative Filtering (Zhong, Yi & Ye)"
    paper = "../shared/papers/collaborative-filtering-efficient-evaluation.txt"
    position = 60
    # its run, tune and prefit jobs take 7 s on average
    job_groups = {RUN_GROUP: 8}
    jobs_class = Jobs
    protocol_score = (
        "task-level MAE of the new models' estimates in a repeat (points, mean over tasks); the rank MAE "
        "among the initial models beside it"
    )

    @classmethod
    def method_entries(cls, config) -> list[MethodEntry]:
        """The item-level methods it compares, and CF's own settings (``method: cf``)."""
        from benchcast.methods.collaborative_filtering import CFSettings

        out = []
        for m in config["methods"]:
            base = m.get("method", m["name"])
            if base == "cf":
                out.append(MethodEntry(m.setdefault("params", {}), tuple(keyword_names(CFSettings) or ())))
            else:
                out += registry_entries([{"name": base, "params": m.setdefault("params", {})}])
        return out

    def scope(self) -> str:
        cfg = self.config
        matrices = [
            f"{m} ({words([self.catalog[d].title for d in spec['datasets']])})" for m, spec in cfg["matrices"].items()
        ]
        return (
            f"{len(matrices)} task matri{'ces' if len(matrices) > 1 else 'x'}: {'; '.join(matrices)} (the paper's "
            f"own benchmarks are not mirrored); {words(cfg['splits'])} split{'s' if len(cfg['splits']) > 1 else ''}; "
            f"budget ratios {words([f'{r:g}' for r in cfg['ratios']])} (the paper: 0.1 to 0.5); "
            # the paper's word: the scope is in every paper_vs_ours.csv row (the digests)
            f"{of_the_paper(cfg['trials'], 5, 'repeats')}; {len(cfg['methods'])} methods; CF's settings "
            + (
                "tuned on the initial models"
                if cfg.get("tuning")
                else "as the config gives them (no tuning in this run)"
            )
        )

    def index(self) -> dict:
        tables, figures, tuning = self.jobs.tables(), self.jobs.figures(), self.jobs.tuning_outputs()
        return self.index_entry(
            "the paper's claims on our matrices (its benchmarks are not mirrored)",
            tables["paper_vs_ours"],
            [
                [
                    "Figure 5: MAE and weighted MAE of accuracy and rank against the budget ratio",
                    [tables["figure5"], figures["figure5"]],
                ],
                [
                    "Figure 6: model-pair similarity on a task against the other tasks",
                    list(self.jobs.figure6_outputs().values()),
                ],
                ["Table 5: against the low-rank completion baseline", [tables["table5"]]],
                [
                    "Figure 8: with and without optimal-transport oversampling (and where it acts)",
                    [tables["figure8"], tables["oversampling"], figures["figure8"]],
                ],
                ["Table 3: seconds per new model", [tables["table3"]]],
                ["Table 4: top-k recall and NDCG", [tables["table4"]]],
            ]
            + (
                [["Figure 9: the hyper-parameter search on the initial models", list(tuning.values())]]
                if tuning
                else []
            ),
        )

    @classmethod
    def protocol_trials(cls, frame, settings):
        """Per repeat of a run's metrics file (:func:`benchcast.stats.ranking.task_metrics`)."""
        return pd.DataFrame(
            {
                "trial": frame["repeat"].astype(int).to_numpy(),
                "score": 100 * frame["mae"].to_numpy(),
                "rank_mae": frame["rank_mae"].to_numpy(),
            }
        )


STUDY = CFTasks
