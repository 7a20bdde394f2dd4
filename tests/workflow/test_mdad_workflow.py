"""The MDAD study end to end on a small items x models CSV the test writes (the paper's GPQA layout)
with published results in the paper's CSV layout: every table, the paper-vs-ours comparison, budgets,
byte-identical on 1 and 2 cores, and a changed selector reruns only its own jobs."""

from __future__ import annotations

import filecmp
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import snakemake  # the repository's Snakefile in a work folder, output on failure
from simdata import irt_responses

pytestmark = pytest.mark.e2e

N_MODELS, N_ITEMS = 40, 60


def make_workdir(root: Path) -> Path:
    scores = irt_responses(N_MODELS, N_ITEMS, rng=np.random.default_rng(5)).scores.astype(int)
    raw = root / "raw" / "mb"
    raw.mkdir(parents=True)
    table = pd.DataFrame(scores.T, columns=[f"org__m{i}" for i in range(N_MODELS)])
    table["subset"] = ["main"] * 40 + ["extra"] * 20
    table.to_csv(raw / "scores.csv", index=False)
    # two published cells in the paper's layout (an unnamed index column; MDAD and error as fractions)
    pd.DataFrame(
        {
            "Technique": ["Random (uniform)", "Random (uniform)"],
            "Number of source models": [10, 10],
            "Split": ["seen", "unseen"],
            "Fraction of sampled points": [5, 5],
            "MDAD": [0.1, 0.2],
            "MDAD lower CI": [0.05, 0.1],
            "MDAD upper CI": [0.15, 0.3],
        }
    ).to_csv(raw / "mdad.csv")
    pd.DataFrame(
        {
            "Dataset": ["x_all"] * 2,
            "Number of sampled points": [5, 5],
            "Fraction of sampled points": [5, 5],
            "Number of source models": [10, 10],
            "Technique": ["Random (uniform)", "Random (uniform)"],
            "Mean estimation error against seen accuracies": [0.1, 0.2],
            "Mean estimation error against unseen accuracies": [0.1, 0.2],
            "Kendall tau correlation against seen accuracies": [0.3, 0.5],
            "Kendall tau correlation against unseen accuracies": [0.2, 0.2],
        }
    ).to_csv(raw / "estimation.csv")
    pd.DataFrame(
        {
            "benchmark": ["GPQA", "BBH"],
            "method": ["random_sampling", "random_sampling"],
            "seconds_per_trial": [0.8, 3.8],
        }
    ).to_csv(root / "runtime.csv", index=False)
    catalog = {
        "sources": {"mb": {"repository": "example/mb", "commit": "0" * 40}},
        "url_template": "https://example.invalid/{repository}/{commit}/{path}",
        "datasets": {
            "toy": {
                "title": "TOY",
                "suite": "toy",
                "kind": "item_binary",
                "source": "mb",
                "format": "csv_matrix",
                "orientation": "items_by_models",
                "item_columns": ["subset"],
                "subtask_column": "subset",
                "files": {
                    "scores": {"path": "scores.csv", "sha256": None},
                    "paper_mdad": {"path": "mdad.csv", "sha256": None},
                    "paper_estimation": {"path": "estimation.csv", "sha256": None},
                },
                "n_models": N_MODELS,
                "n_items": N_ITEMS,
                "mirrored": True,
                "min_accuracy": 0.0,
            }
        },
    }
    (root / "config").mkdir()
    (root / "config" / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    config = {
        "raw_dir": str(root / "raw"),
        "catalog": "config/catalog.yaml",
        "seed": 0,
        "studies": ["mdad"],
        "mdad": {
            "datasets": ["toy"],
            "trials": 4,
            "n_targets": 12,
            "n_sources": [10, 20, 30],  # 30 + 12 targets > 40 models: not run
            "sizes": {"default": [5, 12, 40]},  # 40 is not below the 30-item seen half: not run
            "methods": [
                {"name": "random_sampling"},
                {"name": "random_subtask_equal"},
                {"name": "stratified_confidence"},
                {"name": "tinybenchmarks", "params": {"irt": {"dims": 2}}},
            ],
            "agreement": {"n_boot": 50},
            "table3": {"methods": ["random_sampling"], "sizes": [5], "trials": [2, 4]},
            # two registry methods beside the selectors: the largest source count only; TailoredBench
            # (G-set of 10) skips k = 5
            "cross_paper": {"methods": [{"name": "aipw"}, {"name": "tailoredbench"}]},
            # Appendix G: 10% and 30% of the whole seen half (30 items) and of each subtask's (20 and 10)
            "percent": {
                "benchmark": {"datasets": ["toy"], "fractions": [0.1, 0.3], "trials": 2, "sources": "all"},
                "subtask": {"datasets": ["toy"], "fractions": [0.1, 0.3]},
            },
            "paper_runtime": "runtime.csv",
            "figures": {"curve_sizes": [5, 12], "source_models_k": 5, "figure1": {"dataset": None, "sizes": [5, 12]}},
            # models m1, m10-m19 as fixed targets (the toy catalog has no params_b metadata)
            "same_size": {
                "n_source": 300,
                "sizes": [5, 12],
                "groups": {"ones": {"datasets": ["toy"], "name_regex": "m1"}},
            },
        },
    }
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    work = make_workdir(tmp_path_factory.mktemp("mdad"))
    snakemake(work, "mdad", "--cores", "2", "--quiet")
    return work


def test_tables_and_the_paper_comparison(finished):
    tables = finished / "results" / "tables" / "mdad"
    mdad = pd.read_csv(tables / "mdad.csv")
    assert list(mdad.columns[:9]) == [
        "dataset",
        "method",
        "n_source",
        "split",
        "k",
        "mdad",
        "mdad_lower",
        "mdad_upper",
        "trials",
    ]
    # selectors x source counts x sizes x splits, then aipw and tailoredbench at 20 sources
    assert len(mdad) == 4 * 2 * 2 * 2 + (2 + 1) * 2
    assert set(mdad[mdad.method == "tailoredbench"].k) == {12} and set(mdad[mdad.method == "aipw"].n_source) == {20}
    assert set(mdad.k) == {5, 12} and set(mdad.n_source) == {10, 20} and (mdad.trials == 4).all()
    assert (mdad.mdad_lower <= mdad.mdad).all() and (mdad.mdad <= mdad.mdad_upper).all()
    assert ((mdad.mdad * 2) % 1 == 0).all()  # 0.5-point bins
    agreement = pd.read_csv(tables / "agreement.csv")
    pairs = agreement.groupby(["method", "n_source", "split", "k"]).pairs.sum()
    assert (pairs == 4 * 12 * 11 // 2).all()  # every pair of every trial, once
    pvo = pd.read_csv(tables / "paper_vs_ours.csv")
    assert len(pvo) == 2 + 2 + 2  # MDAD seen/unseen, error and tau per split at (random, 10 sources, k=5)
    row = pvo[(pvo.table == "error") & (pvo.split == "seen")].iloc[0]
    assert row.paper == pytest.approx(15.0)  # the mean of the published trials, in points
    assert pd.read_csv(tables / "acceptance_summary.csv").cells.sum() == 6
    table2 = pd.read_csv(tables / "table2.csv")
    assert len(table2) == 4 * 2 + 2 and (table2.seconds_per_trial > 0).all() and "paper_GPQA" in table2.columns
    sensitivity = pd.read_csv(tables / "sensitivity.csv")
    assert len(sensitivity) == 4 * 2 * (4 + 3)  # methods x sizes x (thresholds + resolutions), 20 sources only
    at_default = sensitivity[(sensitivity.parameter == "threshold") & (sensitivity.value == 0.8)]
    main = mdad[(mdad.n_source == 20) & (mdad.split == "seen")].set_index(["method", "k"]).mdad
    assert at_default.set_index(["method", "k"]).mdad.equals(main.loc[at_default.set_index(["method", "k"]).index])
    cross = pd.read_csv(tables / "cross_paper.csv")
    assert len(cross) == 6 * 2 - 1 and (cross.n_source == 20).all()  # every method, seen half; TB not at k = 5
    assert (cross.groupby("k").methods.first() == pd.Series({5: 5, 12: 6})).all()
    for (_, k), g in cross.groupby(["dataset", "k"]):
        assert g.mdad_rank.min() == 1 and (g.sort_values("mdad").mdad_rank.diff().dropna() >= 0).all()
        ours = mdad[(mdad.n_source == 20) & (mdad.split == "seen") & (mdad.k == k)].set_index("method").mdad
        assert g.set_index("method").mdad.equals(ours.loc[g.method])
    assert set(cross.paper) == {"misses the mark", "MDAD", "TailoredBench"}
    summary = pd.read_csv(tables / "cross_paper_summary.csv")
    assert len(summary) == len(cross) and summary.best.sum() >= 2  # one dataset: each size has a best method
    table5 = pd.read_csv(tables / "table5.csv")
    assert len(table5) == 4 and (table5.n_source == 20).all() and (table5.sizes == "5 12").all()
    seen = mdad[(mdad.n_source == 20) & (mdad.method == "random_sampling")].pivot(
        index="k", columns="split", values="mdad"
    )
    row = table5.set_index("method").loc["random_sampling"]
    assert row.mdad_increase == pytest.approx((seen.unseen - seen.seen).mean())
    for name in (
        "figure1",
        "figure3",
        "figure4",
        "figure6",
        "figure7",
        "figure8",
        "figure13",
        "figure16",
        "cross_paper",
    ):
        assert (finished / "results" / "figures" / "mdad" / f"{name}.png").stat().st_size > 10_000
    percent = pd.read_csv(tables / "percent.csv")
    whole, each = percent[percent.scope == "benchmark"], percent[percent.scope == "subtask"]
    assert len(whole) == 4 * 2 * 2 * 2 and set(whole.n_source) == {10, 20}  # sources: all
    assert dict(whole.groupby("fraction").k.first()) == {0.1: 3, 0.3: 9} and (whole.trials == 2).all()
    assert len(each) == 4 * 2 * 2 and set(each.n_source) == {20} and (each.trials == 10).all()  # the schema's default
    assert dict(each.groupby("fraction").k.first()) == {0.1: 2, 0.3: (6 + 3) / 2}
    for name in ("figure10", "figure17"):
        assert (finished / "results" / "figures" / "mdad" / f"{name}.png").stat().st_size > 10_000
    same = pd.read_csv(tables / "same_size.csv")
    assert (same.models == 11).all() and len(same) == 4 * 2 and same.share_below.between(0, 1).all()
    assert (finished / "results" / "figures" / "mdad" / "figure5.png").stat().st_size > 10_000
    run = pd.read_parquet(finished / "results" / "runs" / "mdad_same_size" / "toy" / "ones" / "random_sampling.parquet")
    assert set(run.model_id) == {"org__m1", *(f"org__m{i}" for i in range(10, 20))}  # the same targets in every trial
    assert run.groupby("trial").size().eq(11 * 2).all()
    table3 = pd.read_csv(tables / "table3.csv")
    assert table3[["n_source", "k", "trials"]].values.tolist() == [[20, 5, 2], [20, 5, 4]]  # largest source count
    assert (table3.half_width >= 0).all()
    for method in ("random_sampling", "stratified_confidence", "tinybenchmarks", "random_subtask_equal"):
        run = pd.read_parquet(finished / "results" / "runs" / "mdad" / "toy" / method / "n_source=20.parquet")
        assert (run.items_queried <= run.k).all() and (run.n_seen == 30).all()


def test_byte_identical_on_one_core(finished, tmp_path):
    subs = ("results/tables/mdad", "results/runs/mdad/toy/tinybenchmarks")
    # table2: measured seconds
    compared = {sub: sorted(p.name for p in (finished / sub).iterdir() if p.name != "table2.csv") for sub in subs}
    again = make_workdir(tmp_path)
    # the compared files and every job they need: all but the figures
    snakemake(again, *(f"{sub}/{name}" for sub in subs for name in compared[sub]), "--cores", "1", "--quiet")
    for sub in subs:
        a, b, names = finished / sub, again / sub, compared[sub]
        assert names and names == sorted(p.name for p in b.iterdir() if p.name != "table2.csv")
        _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
        assert not mismatch and not errors, (sub, mismatch, errors)


def test_a_changed_selector_reruns_only_its_jobs(finished, tmp_path):
    work = tmp_path / "copy"
    shutil.copytree(finished, work, symlinks=True)
    cfg = yaml.safe_load((work / "config" / "config.yaml").read_text())
    cfg["mdad"]["methods"][2]["params"] = {"n_strata": 4}
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(work, "mdad", "-n", "--quiet", "rules").stdout
    stats = out[out.index("Job stats:") : out.index("Reasons:")]
    assert re.search(r"mdad_run\s+2\n", stats) and "ingest" not in stats, out
