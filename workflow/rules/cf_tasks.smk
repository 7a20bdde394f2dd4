# The collaborative-filtering study (Zhong, Yi & Ye): task-level estimates for new models with the
# same per-task budgets for every method; one run job per (matrix, split, method, ratio) looping over
# the repeats, then the tables. The jobs come from benchcast.studies.cf_tasks.plan.

from benchcast.studies.cf_tasks.plan import (  # noqa: E402
    METRICS as CF_METRICS, REPORT_GROUP as CF_REPORT_GROUP, RUN_GROUP as CF_RUN_GROUP, RUNS as CF_RUNS,
    Plan as CFPlan,
)

CF = study_config("cf_tasks")
CF_PLAN = CFPlan(CF, CATALOG)
CF_TABLES = CF_PLAN.tables()
CF_FIGURES = CF_PLAN.figures()
STUDY_DATASETS["cf_tasks"] = CF_PLAN.datasets()
STUDY_OUTPUTS["cf_tasks"] = CF_PLAN.final_outputs()
STUDY_INDEX["cf_tasks"] = {
    "title": "Efficient Evaluation of Large Language Models via Collaborative Filtering (Zhong, Yi & Ye)",
    "paper": "../shared/papers/collaborative-filtering-efficient-evaluation.txt",
    "tolerance": "the paper's claims on our matrices (its benchmarks are not mirrored)",
    "paper_vs_ours": CF_TABLES["paper_vs_ours"],
    "sections": [
        ["Figure 5: MAE and weighted MAE of accuracy and rank against the budget ratio",
         [CF_TABLES["figure5"], CF_FIGURES["figure5"]]],
        ["Table 3: seconds per new model", [CF_TABLES["table3"]]],
        ["Table 4: top-k recall and NDCG", [CF_TABLES["table4"]]],
    ],
}


rule cf_tasks:
    """Every output of the study (also part of `all` when `studies` lists it)."""
    input:
        STUDY_OUTPUTS["cf_tasks"],


rule cf_run:
    """Every repeat of one method on one matrix, split and budget ratio."""
    input:
        models=lambda w: [f"results/data/{d}/models.parquet" for d in CF["matrices"][w.matrix]["datasets"]],
        responses=lambda w: [f"results/data/{d}/responses.parquet" for d in CF["matrices"][w.matrix]["datasets"]],
        item_tables=lambda w: [f"results/data/{d}/items.parquet" for d in CF["matrices"][w.matrix]["datasets"]],
    output:
        estimates=CF_RUNS,
        metrics=CF_METRICS,
    wildcard_constraints:
        matrix=names_regex(CF["matrices"]),
        split="date|random",
        method=names_regex(CF_PLAN.methods),
        ratio=r"[0-9.]+",
    params:
        seed=config["seed"],
        matrix=lambda w: CF["matrices"][w.matrix],
        repeats=CF["repeats"],
        initial_share=CF["initial_share"],
        floor=CF["floor"],
        top_k=CF["top_k"],
        # only this method's parameters: changing another method does not rerun this job
        method_params=lambda w: CF_PLAN.methods[w.method],
    group: CF_RUN_GROUP
    resources:
        **JOB_RESOURCES.of("cf_run"),
    log:
        "logs/cf_tasks/run/{matrix}/{split}/{method}/ratio={ratio}.log",
    benchmark:
        "benchmarks/cf_tasks/run/{matrix}/{split}/{method}/ratio={ratio}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/cf_tasks/run.py"


rule cf_tables:
    """Figure 5, Tables 3 and 4 and the paper's claims from the runs' metrics."""
    input:
        metrics=CF_PLAN.run_files(CF_METRICS),
    output:
        **{name: report(path, caption="../report/cf_tasks/tables.rst", category="CF tasks", subcategory="Tables")
           for name, path in CF_TABLES.items()},
        figure5_png=report(CF_FIGURES["figure5"], caption="../report/cf_tasks/figures.rst", category="CF tasks",
                           subcategory="Figures"),
    params:
        cells=[(c.matrix, c.split, c.method, c.ratio) for c in CF_PLAN.cells],
        claims=CF["claims"],
    group: CF_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("cf_tables"),
    log:
        "logs/cf_tasks/tables.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/cf_tasks/tables.py"
