# "How benchmark prediction from fewer data misses the mark": splits, one job per
# (dataset, split, method, n) looping over trials, then metrics, figures and tables.

from benchcast.studies.misses_the_mark import check_budgets  # noqa: E402

MTM_RUNS = "results/runs/misses_the_mark/{dataset}/{split}/{method}/n={n}.parquet"
MTM_TIMING = "results/timing/misses_the_mark/{dataset}/{split}/{method}/n={n}.parquet"
MTM_TABLES = "results/tables/misses_the_mark"
MTM_FIGS = "results/figures/misses_the_mark"
MTM_IRT = "results/irt/misses_the_mark/{dataset}/{split}"
MTM_IRT_TIMING = "results/timing/misses_the_mark/{dataset}/{split}/irt.parquet"
MTM_LASSO = "results/lasso/misses_the_mark/{dataset}/{split}/{method}"


# Longest jobs first, so that on few cores no long job starts last and becomes the run's tail.
# The IRT fits have priority 10; Random-Search-Learn's cost grows with the budget (MuSR/IFEval/MATH
# n = 200: ~530 s; n = 50: 25-70 s); PCA and Lasso come next (up to ~100 s); every other job takes
# a few seconds. Scheduling only: results do not depend on it.
MTM_RUN_PRIORITY = {"random_search_learn": 6, "pca": 3, "lasso": 3}


def mtm_run_priority(w):
    base = MTM_RUN_PRIORITY.get(MTM_METHOD_NAME.get(w.method, w.method), 0)
    if not base:
        return 0
    return base + sum(int(w.n) >= b for b in (100, 200))  # larger budgets of these methods cost more


def mtm_needs_irt(method_label):
    name = MTM_METHOD_NAME.get(method_label, method_label)  # Figure 5 may ask for an unconfigured AIPW
    return name in REGISTRY and REGISTRY[name].needs_prefit == "irt"


def mtm_needs_lasso_path(method_label):
    name = MTM_METHOD_NAME.get(method_label, method_label)
    return name in REGISTRY and REGISTRY[name].needs_prefit == "lasso"


def mtm_run_inputs(w):
    inputs = dict(
        models=f"results/data/{w.dataset}/models.parquet",
        responses=f"results/data/{w.dataset}/responses.parquet",
        item_table=f"results/data/{w.dataset}/items.parquet",
        splits=f"results/splits/misses_the_mark/{w.dataset}/{w.split}.parquet",
    )
    if mtm_needs_irt(w.method):  # P-IRT / GP-IRT reuse the trial's IRT fit across budgets
        base = MTM_IRT.format(dataset=w.dataset, split=w.split)
        inputs.update(irt_items=f"{base}/items.parquet", irt_trials=f"{base}/trials.parquet",
                      irt_anchors=f"{base}/anchors.parquet",
                      irt_timing=MTM_IRT_TIMING.format(dataset=w.dataset, split=w.split))
    if mtm_needs_lasso_path(w.method):  # Lasso: one regularisation path per trial serves every budget
        base = MTM_LASSO.format(dataset=w.dataset, split=w.split, method=w.method)
        inputs.update(lasso_fits=f"{base}/fits.parquet", lasso_items=f"{base}/items.parquet",
                      lasso_timing=f"{base}/timing.parquet")
    return inputs


def mtm_method_params(w):
    params = dict(MTM_METHOD_PARAMS.get(w.method, {}))
    if mtm_needs_irt(w.method):
        if "irt" in params:
            raise ConfigError(f"config misses_the_mark.methods: {w.method} takes its IRT settings from "
                              "misses_the_mark.irt (one fit shared by P-IRT and GP-IRT); remove params.irt")
        params["irt"] = mtm_irt_fit_params(w.split)
    return params


def mtm_irt_settings(split):
    """misses_the_mark.irt for one split: the shared settings with that split's ``by_split`` overrides."""
    settings = {k: v for k, v in MTM["irt"].items() if k != "by_split"}
    settings.update(MTM["irt"].get("by_split", {}).get(split, {}))
    return settings


def mtm_irt_fit_params(split):
    """The fitter's keyword arguments (what P-IRT / GP-IRT record in their params)."""
    return {k: v for k, v in mtm_irt_settings(split).items() if k != "share_identical_sources"}


def mtm_cells():
    return [
        dict(dataset=d, split=s, method=m, n=n)
        for d in MTM["datasets"]
        for s in MTM["splits"]
        for m in MTM_METHODS
        for n in MTM["budgets"]
    ]


def mtm_figure5_dataset():
    ds = MTM["figure5"]["dataset"]
    if ds != "auto":
        return ds
    # "largest available dataset": most items, then most models (catalog expectations)
    return max(MTM["datasets"], key=lambda d: (CATALOG[d].n_items or 0, CATALOG[d].n_models or 0, d))


check_budgets({"misses_the_mark.budgets": MTM["budgets"]}, iter_item_datasets(MTM["datasets"], CATALOG))
check_budgets({"misses_the_mark.figure5.aipw_n / random_sampling_n": [MTM["figure5"]["aipw_n"],
                                                                     MTM["figure5"]["random_sampling_n"]]},
              [CATALOG[mtm_figure5_dataset()]])


def mtm_final_outputs():
    outs = [
        f"{MTM_TABLES}/paper_vs_ours.csv",
        f"{MTM_TABLES}/paper_vs_ours.md",
        f"{MTM_TABLES}/table1.csv",
        f"{MTM_TABLES}/table2.csv",
        f"{MTM_TABLES}/figure4.csv",
        f"{MTM_FIGS}/figure5.png",
    ]
    for s in MTM["splits"]:
        for n in MTM["budgets"]:
            outs += [f"{MTM_FIGS}/heatmap_{s}_n{n}.png", f"{MTM_TABLES}/heatmap_{s}_n{n}.md"]
    return outs


rule mtm_splits:
    """Source/target splits of every trial (one file per dataset and split)."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
    output:
        "results/splits/misses_the_mark/{dataset}/{split}.parquet",
    params:
        trials=MTM["trials"],
        seed=config["seed"],
        split_params=lambda w: MTM["split_params"].get(w.split, {}),
    log:
        "logs/misses_the_mark/splits/{dataset}/{split}.log",
    benchmark:
        "benchmarks/misses_the_mark/splits/{dataset}/{split}.tsv"
    script:
        "../scripts/mtm_splits.py"


rule mtm_irt:
    """The multidimensional 2PL IRT fit of every trial's source models (P-IRT, GP-IRT), once per dataset and split."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
        splits="results/splits/misses_the_mark/{dataset}/{split}.parquet",
    output:
        item_params=f"{MTM_IRT}/items.parquet",
        trials=f"{MTM_IRT}/trials.parquet",
        anchors=f"{MTM_IRT}/anchors.parquet",
        timing=MTM_IRT_TIMING,
    params:
        seed=config["seed"],
        budgets=MTM["budgets"],   # the k-means anchors of every budget, shared by P-IRT and GP-IRT
        irt=lambda w: mtm_irt_fit_params(w.split),
        share_identical_sources=lambda w: bool(mtm_irt_settings(w.split).get("share_identical_sources", True)),
        # GP-IRT's lambda needs a second, held-out fit; skip it when only P-IRT is configured
        with_bias=any(REGISTRY[n].needs_prefit == "irt" and getattr(REGISTRY[n], "wants_bias", False) for n in MTM_METHOD_NAME.values()),
    resources:
        mem_mb=3000,
    # the longest jobs of the grid (up to ~15 min) and P-IRT/GP-IRT wait on them: start them
    # first so that they do not become the tail of a run on few cores
    priority: 10
    log:
        "logs/misses_the_mark/irt/{dataset}/{split}.log",
    benchmark:
        "benchmarks/misses_the_mark/irt/{dataset}/{split}.tsv"
    script:
        "../scripts/mtm_irt.py"


rule mtm_lasso:
    """Lasso's regularisation path of every trial's source models, once per dataset, split and
    Lasso configuration: the path does not depend on the budget, so it yields the core sets of
    all configured budgets (the three budgets' jobs used to compute it three times)."""
    input:
        models="results/data/{dataset}/models.parquet",
        responses="results/data/{dataset}/responses.parquet",
        item_table="results/data/{dataset}/items.parquet",
        splits="results/splits/misses_the_mark/{dataset}/{split}.parquet",
    output:
        fits=f"{MTM_LASSO}/fits.parquet",
        selected_items=f"{MTM_LASSO}/items.parquet",
        timing=f"{MTM_LASSO}/timing.parquet",
    params:
        budgets=MTM["budgets"],
        method_params=lambda w: {k: v for k, v in MTM_METHOD_PARAMS.get(w.method, {}).items() if k != "max_trials"},
    resources:
        mem_mb=1500,
    priority: 5   # Lasso's run jobs (priority 3-5) wait on it; up to ~100 s on QNLI
    log:
        "logs/misses_the_mark/lasso/{dataset}/{split}/{method}.log",
    benchmark:
        "benchmarks/misses_the_mark/lasso/{dataset}/{split}/{method}.tsv"
    script:
        "../scripts/mtm_lasso.py"


rule mtm_run:
    """All trials of one method at one budget on one dataset and split."""
    input:
        unpack(mtm_run_inputs),
    output:
        estimates=MTM_RUNS,
        timing=MTM_TIMING,
    params:
        seed=config["seed"],
        # only this method's parameters: changing another method's does not rerun this job
        method_params=mtm_method_params,
        method_name=lambda w: MTM_METHOD_NAME.get(w.method, w.method),
    resources:
        mem_mb=lambda w: 4000 if w.method in ("random_search_learn", "pca") else 1500,
    priority: mtm_run_priority
    log:
        "logs/misses_the_mark/run/{dataset}/{split}/{method}/n={n}.log",
    benchmark:
        "benchmarks/misses_the_mark/run/{dataset}/{split}/{method}/n={n}.tsv"
    script:
        "../scripts/mtm_run.py"


rule mtm_metrics:
    """Estimation gap, standard error and reduction per (dataset, split, n, method)."""
    input:
        runs=[MTM_RUNS.format(**c) for c in mtm_cells()],
        timing=[MTM_TIMING.format(**c) for c in mtm_cells()],
    output:
        cells="results/metrics/misses_the_mark/cells.parquet",
    params:
        cells=mtm_cells(),
    log:
        "logs/misses_the_mark/metrics.log",
    benchmark:
        "benchmarks/misses_the_mark/metrics.tsv"
    script:
        "../scripts/mtm_metrics.py"


rule mtm_similarity:
    """Figure 4: per-target similarity (eq. 4) vs normalized gap (eq. 6), correlated per dataset x method."""
    input:
        runs=[MTM_RUNS.format(**c) for c in mtm_cells()],
        splits=expand("results/splits/misses_the_mark/{dataset}/{split}.parquet", dataset=MTM["datasets"], split=MTM["splits"]),
        data=expand("results/data/{dataset}/{table}.parquet", dataset=MTM["datasets"], table=["models", "responses", "items"]),
    output:
        per_target="results/metrics/misses_the_mark/per_target.parquet",
        table=report(f"{MTM_TABLES}/figure4.csv", caption="../report/figure4.rst", category="Misses the mark", subcategory="Model similarity"),
        png=report(f"{MTM_FIGS}/figure4.png", caption="../report/figure4.rst", category="Misses the mark", subcategory="Model similarity"),
    params:
        cells=mtm_cells(),
        titles={d: CATALOG[d].title for d in MTM["datasets"]},
    log:
        "logs/misses_the_mark/similarity.log",
    benchmark:
        "benchmarks/misses_the_mark/similarity.tsv"
    script:
        "../scripts/mtm_similarity.py"


rule mtm_figure5:
    """Figure 5: normalized gap by similarity bin, AIPW (n=50) vs Random-Sampling (n=100)."""
    input:
        aipw=MTM_RUNS.replace("{dataset}", mtm_figure5_dataset()).replace("{split}", MTM["figure5"]["split"]).replace("{method}", "aipw").replace("{n}", str(MTM["figure5"]["aipw_n"])),
        rs=MTM_RUNS.replace("{dataset}", mtm_figure5_dataset()).replace("{split}", MTM["figure5"]["split"]).replace("{method}", "random_sampling").replace("{n}", str(MTM["figure5"]["random_sampling_n"])),
        splits=f"results/splits/misses_the_mark/{mtm_figure5_dataset()}/{MTM['figure5']['split']}.parquet",
        data=expand("results/data/{dataset}/{table}.parquet", dataset=[mtm_figure5_dataset()], table=["models", "responses", "items"]),
    output:
        csv=f"{MTM_TABLES}/figure5.csv",
        png=report(f"{MTM_FIGS}/figure5.png", caption="../report/figure5.rst", category="Misses the mark", subcategory="Model similarity"),
    params:
        dataset=mtm_figure5_dataset(),
        title=CATALOG[mtm_figure5_dataset()].title,
        bins=MTM["figure5"]["bins"],
        labels=[f"AIPW (n={MTM['figure5']['aipw_n']})", f"Random-Sampling (n={MTM['figure5']['random_sampling_n']})"],
    log:
        "logs/misses_the_mark/figure5.log",
    benchmark:
        "benchmarks/misses_the_mark/figure5.tsv"
    script:
        "../scripts/mtm_figure5.py"


rule mtm_tables:
    """Heatmaps (Figures 2, 3, 6-11), Table 1, Table 2 and the paper-vs-ours comparison."""
    input:
        cells="results/metrics/misses_the_mark/cells.parquet",
        paper=MTM["paper_values"],
        timing=[MTM_TIMING.format(**c) for c in mtm_cells()],
    output:
        heatmaps_png=[
            report(f"{MTM_FIGS}/heatmap_{s}_n{n}.png", caption="../report/heatmap.rst", category="Misses the mark",
                   subcategory="Estimation gap", labels={"split": s, "n": str(n)})
            for s in MTM["splits"] for n in MTM["budgets"]
        ],
        heatmaps_md=[f"{MTM_TABLES}/heatmap_{s}_n{n}.md" for s in MTM["splits"] for n in MTM["budgets"]],
        heatmaps_csv=[f"{MTM_TABLES}/heatmap_{s}_n{n}.csv" for s in MTM["splits"] for n in MTM["budgets"]],
        table1=report(f"{MTM_TABLES}/table1.csv", caption="../report/table1.rst", category="Misses the mark", subcategory="Tables"),
        table1_md=f"{MTM_TABLES}/table1.md",
        table2=report(f"{MTM_TABLES}/table2.csv", caption="../report/table2.rst", category="Misses the mark", subcategory="Tables"),
        table2_md=f"{MTM_TABLES}/table2.md",
        paper_vs_ours=report(f"{MTM_TABLES}/paper_vs_ours.csv", caption="../report/paper_vs_ours.rst", category="Misses the mark", subcategory="Paper vs ours"),
        paper_vs_ours_md=f"{MTM_TABLES}/paper_vs_ours.md",
        summary=f"{MTM_TABLES}/acceptance_summary.csv",
    params:
        splits=MTM["splits"],
        budgets=MTM["budgets"],
        titles={d: CATALOG[d].title for d in CATALOG.names("item_binary")},
        timing_cells=mtm_cells(),
        table2_dataset=mtm_figure5_dataset(),
        tolerance=MTM["tolerance"],
    log:
        "logs/misses_the_mark/tables.log",
    benchmark:
        "benchmarks/misses_the_mark/tables.tsv"
    script:
        "../scripts/mtm_tables.py"
