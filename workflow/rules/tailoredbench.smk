# TailoredBench (Yuan et al.): the dump's own source/target roles in every run, one job per
# (setting, inference count) looping over the runs, then tables and figures.
# The settings and jobs come from benchcast.studies.tailoredbench.jobs.

from benchcast.studies.tailoredbench.jobs import (  # noqa: E402
    METRICS as TB_METRICS, PREFIT as TB_PREFIT, REPORT_GROUP as TB_REPORT_GROUP, RUN_GROUP as TB_RUN_GROUP,
    RUNS as TB_RUNS, SPLITS as TB_SPLITS, TIMING as TB_TIMING,
)

TB_STUDY = load_study("tailoredbench")
TB = TB_STUDY.config
TB_JOBS = TB_STUDY.jobs
TB_DATASET = TB["dataset"]
TB_TABLES = TB_JOBS.tables()
TB_FIGURES = TB_JOBS.figures()


rule tailoredbench:
    """Every output of the study (also part of `all` when `studies` lists it)."""
    input:
        TB_STUDY.outputs(),


rule tb_splits:
    """The runs' source/target roles: the dump's own files (the 'given' split), the same in every run."""
    input:
        **dataset_tables("{dataset}"),
    output:
        TB_SPLITS,
    params:
        trials=TB["trials"],
        seed=config["seed"],
        min_accuracy=TB["min_accuracy"],
    resources:
        **JOB_RESOURCES.of("tb_splits"),
    log:
        "logs/tailoredbench/splits/{dataset}.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/tailoredbench/splits.py"


rule tb_prefit:
    """The IRT of a P-IRT / GP-IRT setting with its anchors for every inference count: one fit
    serves every run (every run has the same source models)."""
    input:
        **dataset_tables("{dataset}"),
        splits=TB_SPLITS,
    output:
        directory(TB_PREFIT),
    wildcard_constraints:
        setting=names_regex(TB_JOBS.prefit_names()),
    params:
        settings=lambda w: TB_JOBS.prefit_settings(w.setting),
        budgets=lambda w: list(TB_JOBS.settings[w.setting].budgets),
        seed=config["seed"],
        min_accuracy=TB["min_accuracy"],
    resources:
        **JOB_RESOURCES.of("tb_prefit"),
    log:
        "logs/tailoredbench/prefit/{dataset}/{setting}.log",
    benchmark:
        "benchmarks/tailoredbench/prefit/{dataset}/{setting}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/tailoredbench/prefit.py"


rule tb_run:
    """All runs of one setting at one inference count."""
    input:
        unpack(lambda w: TB_JOBS.run_inputs(w.setting)),
    output:
        estimates=TB_RUNS,
        timing=TB_TIMING,
    wildcard_constraints:
        setting=names_regex(TB_JOBS.settings),
    params:
        seed=config["seed"],
        min_accuracy=TB["min_accuracy"],
        # only this setting's method and parameters: changing another setting does not rerun this job
        method=lambda w: TB_JOBS.settings[w.setting].method,
        method_params=lambda w: TB_JOBS.settings[w.setting].params,
        prefit_kind=lambda w: "irt" if TB_JOBS.prefit_settings(w.setting) else None,
    group: TB_RUN_GROUP
    resources:
        **JOB_RESOURCES.of("tb_run"),
    log:
        "logs/tailoredbench/run/{dataset}/{setting}/n={n}.log",
    benchmark:
        "benchmarks/tailoredbench/run/{dataset}/{setting}/n={n}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/tailoredbench/run.py"


rule tb_metrics:
    """Kendall's tau, MAE and pairwise ranking accuracy of every run of every setting."""
    input:
        runs=TB_JOBS.cell_files(TB_RUNS),
    output:
        TB_METRICS,
    params:
        cells=TB_JOBS.cells(),
    group: TB_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("tb_metrics"),
    log:
        "logs/tailoredbench/metrics.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/tailoredbench/metrics.py"


rule tb_tables:
    """Table 6, the ablation tables, the Z-test, the figures and the paper-vs-ours comparison."""
    input:
        per_run=TB_METRICS,
        paper=TB["paper_values"],
    output:
        **{name: report(path, caption=f"../report/tailoredbench/tables.rst", category="TailoredBench", subcategory="Tables")
           if name in ("table6", "paper_vs_ours") else path for name, path in TB_TABLES.items()},
        **{name: report(path, caption="../report/tailoredbench/figures.rst", category="TailoredBench", subcategory="Figures")
           for name, path in TB_FIGURES.items()},
    params:
        table6=TB["table6"],
        ablations=TB["ablations"],
        figures={fig: TB_JOBS.figure_points(fig) for fig in TB["figures"]},
        tolerance=TB["tolerance"],
        run=TB_STUDY.run_words(),
    group: TB_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("tb_tables"),
    log:
        "logs/tailoredbench/tables.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/tailoredbench/tables.py"
