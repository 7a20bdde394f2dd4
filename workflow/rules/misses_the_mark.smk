# "How benchmark prediction from fewer data misses the mark": splits, one job per
# (dataset, split, method, n) looping over trials, then metrics, figures and tables.
# The jobs a config asks for come from benchcast.studies.misses_the_mark.jobs.

from benchcast.studies.misses_the_mark.jobs import (  # noqa: E402
    FIGURES as MTM_FIGS, PREFIT as MTM_PREFIT, PREFIT_PART as MTM_PREFIT_PART, PREFIT_PRIORITY, REPORT_GROUP as MTM_REPORT_GROUP,
    RUNS as MTM_RUNS, SPLITS as MTM_SPLITS, TABLES as MTM_TABLES, TIMING as MTM_TIMING,
)

MTM_STUDY = load_study("misses_the_mark")
MTM = MTM_STUDY.config
MTM_JOBS = MTM_STUDY.jobs
MTM_CELLS = MTM_JOBS.cells()
MTM_FIG5 = MTM_JOBS.figure5_dataset


rule misses_the_mark:
    """Every output of the study (also part of `all` when `studies` lists it)."""
    input:
        MTM_STUDY.outputs(),


rule mtm_splits:
    """Source/target splits of every trial (one file per dataset and split)."""
    input:
        **dataset_tables("{dataset}"),
    output:
        MTM_SPLITS,
    params:
        trials=MTM["trials"],
        seed=config["seed"],
        split_params=lambda w: MTM["split_params"].get(w.split, {}),
    resources:
        **JOB_RESOURCES.of("mtm_splits"),
    log:
        "logs/misses_the_mark/splits/{dataset}/{split}.log",
    benchmark:
        "benchmarks/misses_the_mark/splits/{dataset}/{split}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/misses_the_mark/splits.py"


rule mtm_prefit_part:
    """One trial range of a prefit split into jobs (misses_the_mark.prefit_parts: the IRT fits of
    the largest datasets, otherwise the longest jobs of the whole run); mtm_prefit merges them."""
    input:
        **dataset_tables("{dataset}"),
        splits=MTM_SPLITS,
    output:
        temp(directory(MTM_PREFIT_PART)),
    wildcard_constraints:
        fit=names_regex(MTM_JOBS.prefit_keys()),
        part=r"\d+",
    params:
        kind=lambda w: MTM_JOBS.prefit_kind(w.fit),
        settings=lambda w: MTM_JOBS.prefit_settings(w.fit, w.split),
        budgets=MTM["budgets"],
        seed=config["seed"],
        part=lambda w: [int(w.part), MTM_JOBS.prefit_parts(w.dataset, w.fit)],
    resources:
        **JOB_RESOURCES.of("mtm_prefit_part", "fit"),
        slurm_extra=lambda w: slurm_nice(PREFIT_PRIORITY[MTM_JOBS.prefit_kind(w.fit)]),
    priority: lambda w: PREFIT_PRIORITY[MTM_JOBS.prefit_kind(w.fit)]
    log:
        "logs/misses_the_mark/prefit/{dataset}/{split}/{fit}_parts/{part}.log",
    benchmark:
        "benchmarks/misses_the_mark/prefit/{dataset}/{split}/{fit}_parts/{part}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/misses_the_mark/prefit.py"


rule mtm_prefit:
    """A budget-independent per-trial fit of every trial's source models, once per dataset, split
    and fit: the IRT of P-IRT and GP-IRT with their k-means anchors for every budget ({fit} irt),
    or a Lasso configuration's regularisation path, which yields every budget's core set ({fit}
    its label). The run jobs of all budgets read it. A prefit split into parts
    (misses_the_mark.prefit_parts) is their merge: the bytes one job writes."""
    input:
        **dataset_tables("{dataset}"),
        splits=MTM_SPLITS,
        parts=lambda w: MTM_JOBS.prefit_part_dirs(w.dataset, w.split, w.fit),
    output:
        directory(MTM_PREFIT),
    wildcard_constraints:
        fit=names_regex(MTM_JOBS.prefit_keys()),
    params:
        kind=lambda w: MTM_JOBS.prefit_kind(w.fit),
        settings=lambda w: MTM_JOBS.prefit_settings(w.fit, w.split),
        budgets=MTM["budgets"],
        seed=config["seed"],
    group: lambda w: MTM_JOBS.prefit_group(w.fit)
    resources:
        **JOB_RESOURCES.of("mtm_prefit", "fit"),
        # SLURM starts jobs by its own priority: hand it the group's (slurm_nice)
        slurm_extra=lambda w: slurm_nice(MTM_JOBS.group_priority(MTM_JOBS.prefit_group(w.fit))),
    # the longest jobs of the grid, and their run jobs wait on them: start them first so that
    # they do not become the tail of a run on few cores
    priority: lambda w: PREFIT_PRIORITY[MTM_JOBS.prefit_kind(w.fit)]
    log:
        "logs/misses_the_mark/prefit/{dataset}/{split}/{fit}.log",
    benchmark:
        "benchmarks/misses_the_mark/prefit/{dataset}/{split}/{fit}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/misses_the_mark/prefit.py"


rule mtm_run:
    """All trials of one method at one budget on one dataset and split."""
    input:
        unpack(lambda w: MTM_JOBS.run_inputs(w.dataset, w.split, w.method)),
    output:
        estimates=MTM_RUNS,
        timing=MTM_TIMING,
    params:
        seed=config["seed"],
        # only this method's parameters: changing another method's does not rerun this job
        method_params=lambda w: MTM_JOBS.method_params(w.method, w.split),
        method_name=lambda w: MTM_JOBS.name_of(w.method),
        prefit_kind=lambda w: MTM_JOBS.prefit(w.method),
    group: lambda w: MTM_JOBS.run_group(w.method)
    resources:
        **JOB_RESOURCES.of("mtm_run", "method"),
        slurm_extra=lambda w: slurm_nice(MTM_JOBS.group_priority(MTM_JOBS.run_group(w.method))),
    priority: lambda w: MTM_JOBS.run_priority(w.method, w.n)
    log:
        "logs/misses_the_mark/run/{dataset}/{split}/{method}/n={n}.log",
    benchmark:
        "benchmarks/misses_the_mark/run/{dataset}/{split}/{method}/n={n}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/misses_the_mark/run.py"


rule mtm_metrics:
    """Estimation gap, standard error and reduction per (dataset, split, n, method)."""
    input:
        runs=MTM_JOBS.cell_files(MTM_RUNS),
        timing=MTM_JOBS.cell_files(MTM_TIMING),
    output:
        cells="results/metrics/misses_the_mark/cells.parquet",
    params:
        cells=MTM_CELLS,
    group: MTM_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("mtm_metrics"),
    log:
        "logs/misses_the_mark/metrics.log",
    benchmark:
        "benchmarks/misses_the_mark/metrics.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/misses_the_mark/metrics.py"


rule mtm_similarity:
    """Figure 4: per-target similarity (eq. 4) vs normalized gap (eq. 6), correlated per dataset x method."""
    input:
        runs=MTM_JOBS.cell_files(MTM_RUNS),
        splits=expand(MTM_SPLITS, dataset=MTM["datasets"], split=MTM["splits"]),
        data=expand("results/data/{dataset}/{table}.parquet", dataset=MTM["datasets"], table=["models", "responses", "items"]),
    output:
        per_target="results/metrics/misses_the_mark/per_target.parquet",
        table=report(f"{MTM_TABLES}/figure4.csv", caption="../report/misses_the_mark/figure4.rst", category="Misses the mark", subcategory="Model similarity"),
        png=report(f"{MTM_FIGS}/figure4.png", caption="../report/misses_the_mark/figure4.rst", category="Misses the mark", subcategory="Model similarity"),
    params:
        cells=MTM_CELLS,
        titles=MTM_JOBS.titles(MTM["datasets"]),
    group: MTM_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("mtm_similarity"),
    log:
        "logs/misses_the_mark/similarity.log",
    benchmark:
        "benchmarks/misses_the_mark/similarity.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/misses_the_mark/similarity.py"


rule mtm_figure5:
    """Figure 5: normalized gap by similarity bin, AIPW (n=50) vs Random-Sampling (n=100)."""
    input:
        aipw=MTM_JOBS.figure5_run("aipw", MTM["figure5"]["aipw_n"]),
        rs=MTM_JOBS.figure5_run("random_sampling", MTM["figure5"]["random_sampling_n"]),
        splits=MTM_SPLITS.format(dataset=MTM_FIG5, split=MTM["figure5"]["split"]),
        data=expand("results/data/{dataset}/{table}.parquet", dataset=[MTM_FIG5], table=["models", "responses", "items"]),
    output:
        csv=f"{MTM_TABLES}/figure5.csv",
        png=report(f"{MTM_FIGS}/figure5.png", caption="../report/misses_the_mark/figure5.rst", category="Misses the mark", subcategory="Model similarity"),
    params:
        dataset=MTM_FIG5,
        title=CATALOG[MTM_FIG5].title,
        bins=MTM["figure5"]["bins"],
        labels=[f"AIPW (n={MTM['figure5']['aipw_n']})", f"Random-Sampling (n={MTM['figure5']['random_sampling_n']})"],
    group: MTM_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("mtm_figure5"),
    log:
        "logs/misses_the_mark/figure5.log",
    benchmark:
        "benchmarks/misses_the_mark/figure5.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/misses_the_mark/figure5.py"


rule mtm_tables:
    """Heatmaps (Figures 2, 3, 6-11), Table 1, Table 2, Kendall's tau and the paper-vs-ours comparison."""
    input:
        cells="results/metrics/misses_the_mark/cells.parquet",
        paper=MTM["paper_values"],
        timing=MTM_JOBS.cell_files(MTM_TIMING),
    output:
        heatmaps_png=[
            report(f"{MTM_FIGS}/heatmap_{s}_n{n}.png", caption="../report/misses_the_mark/heatmap.rst", category="Misses the mark",
                   subcategory="Estimation gap", labels={"split": s, "n": str(n)})
            for s in MTM["splits"] for n in MTM["budgets"]
        ],
        heatmaps_md=MTM_JOBS.heatmaps(MTM_TABLES, "md"),
        heatmaps_csv=MTM_JOBS.heatmaps(MTM_TABLES, "csv"),
        kendall_tau=report(f"{MTM_TABLES}/kendall_tau.csv", caption="../report/misses_the_mark/kendall_tau.rst", category="Misses the mark", subcategory="Tables"),
        kendall_tau_md=f"{MTM_TABLES}/kendall_tau.md",
        table1=report(f"{MTM_TABLES}/table1.csv", caption="../report/misses_the_mark/table1.rst", category="Misses the mark", subcategory="Tables"),
        table1_md=f"{MTM_TABLES}/table1.md",
        table2=report(f"{MTM_TABLES}/table2.csv", caption="../report/misses_the_mark/table2.rst", category="Misses the mark", subcategory="Tables"),
        table2_md=f"{MTM_TABLES}/table2.md",
        paper_vs_ours=report(f"{MTM_TABLES}/paper_vs_ours.csv", caption="../report/misses_the_mark/paper_vs_ours.rst", category="Misses the mark", subcategory="Paper vs ours"),
        paper_vs_ours_md=f"{MTM_TABLES}/paper_vs_ours.md",
        summary=f"{MTM_TABLES}/acceptance_summary.csv",
    params:
        splits=MTM["splits"],
        budgets=MTM["budgets"],
        titles=MTM_JOBS.titles(CATALOG.names("item_binary")),
        timing_cells=MTM_CELLS,
        table2_dataset=MTM_FIG5,
        tolerance=MTM["tolerance"],
        compare_as=MTM_JOBS.compare_as,
        run=MTM_STUDY.run_words(),
    group: MTM_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("mtm_tables"),
    log:
        "logs/misses_the_mark/tables.log",
    benchmark:
        "benchmarks/misses_the_mark/tables.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/misses_the_mark/tables.py"
