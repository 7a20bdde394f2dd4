# The collaborative-filtering study (Zhong, Yi & Ye): task-level estimates for new models with the
# same per-task budgets for every method; one run job per (matrix, split, method, ratio) looping over
# the repeats, then the tables. The jobs come from benchcast.studies.cf_tasks.plan.

from benchcast.studies.cf_tasks.plan import (  # noqa: E402
    METRICS as CF_METRICS, REPORT_GROUP as CF_REPORT_GROUP, RUN_GROUP as CF_RUN_GROUP, RUNS as CF_RUNS,
    PREFIT as CF_PREFIT, TUNING as CF_TUNING, Plan as CFPlan,
)

CF = study_config("cf_tasks")
CF_PLAN = CFPlan(CF, CATALOG)
CF_TABLES = CF_PLAN.tables()
CF_FIGURES = CF_PLAN.figures()
CF_TUNING_OUTPUTS = CF_PLAN.tuning_outputs()
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
        ["Figure 6: model-pair similarity on a task against the other tasks",
         list(CF_PLAN.figure6_outputs().values())],
        ["Table 5: against the low-rank completion baseline", [CF_TABLES["table5"]]],
        ["Figure 8: with and without optimal-transport oversampling", [CF_TABLES["figure8"], CF_FIGURES["figure8"]]],
        ["Table 3: seconds per new model", [CF_TABLES["table3"]]],
        ["Table 4: top-k recall and NDCG", [CF_TABLES["table4"]]],
    ] + ([["Figure 9: the hyper-parameter search on the initial models", list(CF_TUNING_OUTPUTS.values())]]
         if CF_TUNING_OUTPUTS else []),
}



rule cf_tasks:
    """Every output of the study (also part of `all` when `studies` lists it)."""
    input:
        STUDY_OUTPUTS["cf_tasks"],


rule cf_run:
    """Every repeat of one method on one matrix, split and budget ratio."""
    input:
        models=CF_PLAN.matrix_inputs("models"),
        responses=CF_PLAN.matrix_inputs("responses"),
        item_tables=CF_PLAN.matrix_inputs("items"),
        # the tuned CF settings, for the methods that run CF
        tuning=lambda w: CF_PLAN.tuning_files(w.matrix, w.split) if CF_PLAN.tuned(w.method) else [],
        # the IRT fit P-IRT and GP-IRT share across ratios
        prefit=lambda w: [CF_PREFIT.format(matrix=w.matrix, split=w.split)] if CF_PLAN.uses_irt_prefit(w.method) else [],
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
        matrix=lambda w: CF_PLAN.matrix_spec(w.matrix),
        repeats=CF["repeats"],
        initial_share=CF["initial_share"],
        floor=CF["floor"],
        top_k=CF["top_k"],
        # only this method's parameters: changing another method does not rerun this job
        method_params=lambda w: CF_PLAN.methods[w.method],
        base=lambda w: CF_PLAN.bases[w.method],
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


rule cf_prefit:
    """The IRT fit of every repeat and task and its anchors for every ratio's budget, shared by
    P-IRT and GP-IRT (one fit per task under the date split)."""
    input:
        models=CF_PLAN.matrix_inputs("models"),
        responses=CF_PLAN.matrix_inputs("responses"),
        item_tables=CF_PLAN.matrix_inputs("items"),
    output:
        directory(CF_PREFIT),
    wildcard_constraints:
        matrix=names_regex(CF["matrices"]),
        split="date|random",
    params:
        seed=config["seed"],
        matrix=lambda w: CF_PLAN.matrix_spec(w.matrix),
        repeats=CF["repeats"],
        initial_share=CF["initial_share"],
        floor=CF["floor"],
        ratios=CF["ratios"],
        settings=CF_PLAN.irt_prefit_settings(),
    group: CF_RUN_GROUP
    resources:
        **JOB_RESOURCES.of("cf_prefit"),
    log:
        "logs/cf_tasks/prefit/{matrix}/{split}.log",
    benchmark:
        "benchmarks/cf_tasks/prefit/{matrix}/{split}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/cf_tasks/prefit.py"


rule cf_tune:
    """The CF settings chosen on one split's initial models (inner validation; Figure 9's sweeps)."""
    input:
        models=CF_PLAN.matrix_inputs("models"),
        responses=CF_PLAN.matrix_inputs("responses"),
        item_tables=CF_PLAN.matrix_inputs("items"),
    output:
        sweep=CF_TUNING,
    wildcard_constraints:
        matrix=names_regex(CF["matrices"]),
        split="date|random",
        repeat=r"\d+",
    params:
        seed=config["seed"],
        matrix=lambda w: CF_PLAN.matrix_spec(w.matrix),
        initial_share=CF["initial_share"],
        floor=CF["floor"],
        tuning=CF.get("tuning"),
    group: CF_RUN_GROUP
    resources:
        **JOB_RESOURCES.of("cf_tune"),
    log:
        "logs/cf_tasks/tune/{matrix}/{split}/repeat={repeat}.log",
    benchmark:
        "benchmarks/cf_tasks/tune/{matrix}/{split}/repeat={repeat}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/cf_tasks/tune.py"


if CF_TUNING_OUTPUTS:

    rule cf_tuning_tables:
        """Figure 9 (the inner validation's sweeps) and the settings chosen per matrix, split and repeat."""
        input:
            sweeps=CF_PLAN.all_tuning_files(),
        output:
            **{name: report(path, caption="../report/cf_tasks/tables.rst", category="CF tasks", subcategory="Tuning")
               for name, path in CF_TUNING_OUTPUTS.items()},
        params:
            searches=[(m, s) for m in CF["matrices"] for s in CF_PLAN.splits(m) for _ in CF_PLAN.tuning_files(m, s)],
            grid=(CF.get("tuning") or {}).get("grid"),
        group: CF_REPORT_GROUP
        resources:
            **JOB_RESOURCES.of("cf_tables"),
        log:
            "logs/cf_tasks/tuning_tables.log",
        conda:
            BENCHCAST_ENV
        script:
            "../scripts/cf_tasks/tuning_tables.py"


rule cf_figure6:
    """Figure 6: per task, every model pair's answer correlation on it against on the other tasks."""
    input:
        models=[f"results/data/{d}/models.parquet" for d in CF_PLAN.datasets()],
        responses=[f"results/data/{d}/responses.parquet" for d in CF_PLAN.datasets()],
        item_tables=[f"results/data/{d}/items.parquet" for d in CF_PLAN.datasets()],
    output:
        table=report(CF_PLAN.figure6_outputs()["table"], caption="../report/cf_tasks/tables.rst", category="CF tasks",
                     subcategory="Tables"),
        png=report(CF_PLAN.figure6_outputs()["png"], caption="../report/cf_tasks/figures.rst", category="CF tasks",
                   subcategory="Figures"),
    params:
        matrices={m: CF_PLAN.matrix_spec(m) for m in CF["matrices"]},
    group: CF_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("cf_tables"),
    log:
        "logs/cf_tasks/figure6.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/cf_tasks/figure6.py"


rule cf_tables:
    """Figure 5, Tables 3 and 4 and the paper's claims from the runs' metrics."""
    input:
        metrics=CF_PLAN.run_files(CF_METRICS),
    output:
        **{name: report(path, caption="../report/cf_tasks/tables.rst", category="CF tasks", subcategory="Tables")
           for name, path in CF_TABLES.items()},
        **{f"{name}_png": report(path, caption="../report/cf_tasks/figures.rst", category="CF tasks",
                                 subcategory="Figures") for name, path in CF_FIGURES.items()},
    params:
        cells=[(c.matrix, c.split, c.method, c.ratio) for c in CF_PLAN.cells],
        bases=CF_PLAN.bases,
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
