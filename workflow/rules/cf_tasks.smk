# The collaborative-filtering study (Zhong, Yi & Ye): task-level estimates for new models with the
# same per-task budgets for every method; one run job per (matrix, split, method, ratio) looping over
# the repeats, then the tables. The jobs come from benchcast.studies.cf_tasks.jobs.

from benchcast.studies.cf_tasks.jobs import (  # noqa: E402
    METRICS as CF_METRICS, REPORT_GROUP as CF_REPORT_GROUP, RUN_GROUP as CF_RUN_GROUP, RUNS as CF_RUNS,
    PREFIT as CF_PREFIT, TUNING as CF_TUNING,
)

CF_STUDY = load_study("cf_tasks")
CF = CF_STUDY.config
CF_JOBS = CF_STUDY.jobs
CF_TABLES = CF_JOBS.tables()
CF_FIGURES = CF_JOBS.figures()
CF_TUNING_OUTPUTS = CF_JOBS.tuning_outputs()



rule cf_tasks:
    """Every output of the study (also part of `all` when `studies` lists it)."""
    input:
        CF_STUDY.outputs(),


rule cf_run:
    """Every repeat of one method on one matrix, split and budget ratio."""
    input:
        models=CF_JOBS.matrix_inputs("models"),
        responses=CF_JOBS.matrix_inputs("responses"),
        item_tables=CF_JOBS.matrix_inputs("items"),
        # the tuned CF settings, for the methods that run CF
        tuning=lambda w: CF_JOBS.tuning_files(w.matrix, w.split) if CF_JOBS.tuned(w.method) else [],
        # the IRT fit P-IRT and GP-IRT share across ratios
        prefit=lambda w: [CF_PREFIT.format(matrix=w.matrix, split=w.split)] if CF_JOBS.uses_irt_prefit(w.method) else [],
    output:
        estimates=CF_RUNS,
        metrics=CF_METRICS,
    wildcard_constraints:
        matrix=names_regex(CF["matrices"]),
        split="date|random",
        method=names_regex(CF_JOBS.methods),
        ratio=r"[0-9.]+",
    params:
        seed=config["seed"],
        matrix=lambda w: CF_JOBS.matrix_spec(w.matrix),
        trials=CF["trials"],
        initial_share=CF["initial_share"],
        floor=CF["floor"],
        top_k=CF["top_k"],
        # only this method's parameters: changing another method does not rerun this job
        method_params=lambda w: CF_JOBS.methods[w.method],
        base=lambda w: CF_JOBS.bases[w.method],
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
        models=CF_JOBS.matrix_inputs("models"),
        responses=CF_JOBS.matrix_inputs("responses"),
        item_tables=CF_JOBS.matrix_inputs("items"),
    output:
        directory(CF_PREFIT),
    wildcard_constraints:
        matrix=names_regex(CF["matrices"]),
        split="date|random",
    params:
        seed=config["seed"],
        matrix=lambda w: CF_JOBS.matrix_spec(w.matrix),
        trials=CF["trials"],
        initial_share=CF["initial_share"],
        floor=CF["floor"],
        ratios=CF["ratios"],
        settings=CF_JOBS.irt_prefit_settings(),
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
        models=CF_JOBS.matrix_inputs("models"),
        responses=CF_JOBS.matrix_inputs("responses"),
        item_tables=CF_JOBS.matrix_inputs("items"),
    output:
        sweep=CF_TUNING,
    wildcard_constraints:
        matrix=names_regex(CF["matrices"]),
        split="date|random",
        repeat=r"\d+",
    params:
        seed=config["seed"],
        matrix=lambda w: CF_JOBS.matrix_spec(w.matrix),
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
            sweeps=CF_JOBS.all_tuning_files(),
        output:
            **{name: report(path, caption="../report/cf_tasks/tables.rst", category="CF tasks", subcategory="Tuning")
               for name, path in CF_TUNING_OUTPUTS.items()},
        params:
            searches=[(m, s) for m in CF["matrices"] for s in CF_JOBS.splits(m) for _ in CF_JOBS.tuning_files(m, s)],
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
        models=[f"results/data/{d}/models.parquet" for d in CF_JOBS.datasets()],
        responses=[f"results/data/{d}/responses.parquet" for d in CF_JOBS.datasets()],
        item_tables=[f"results/data/{d}/items.parquet" for d in CF_JOBS.datasets()],
    output:
        table=report(CF_JOBS.figure6_outputs()["table"], caption="../report/cf_tasks/tables.rst", category="CF tasks",
                     subcategory="Tables"),
        png=report(CF_JOBS.figure6_outputs()["png"], caption="../report/cf_tasks/figures.rst", category="CF tasks",
                   subcategory="Figures"),
    params:
        matrices={m: CF_JOBS.matrix_spec(m) for m in CF["matrices"]},
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
    """Figure 5, Tables 3 and 4, where the oversampling acts, and the paper's claims, from the runs."""
    input:
        metrics=CF_JOBS.run_files(CF_METRICS),
        with_ot=CF_JOBS.ot_files(oversample=True),
        without_ot=CF_JOBS.ot_files(oversample=False),
    output:
        **{name: report(path, caption="../report/cf_tasks/tables.rst", category="CF tasks", subcategory="Tables")
           for name, path in CF_TABLES.items()},
        **{f"{name}_png": report(path, caption="../report/cf_tasks/figures.rst", category="CF tasks",
                                 subcategory="Figures") for name, path in CF_FIGURES.items()},
    params:
        cells=[(c.matrix, c.split, c.method, c.ratio) for c in CF_JOBS.cells],
        ot_cells=CF_JOBS.ot_cells(),
        bases=CF_JOBS.bases,
        claims=CF["claims"],
        run=CF_STUDY.run_words(),
    group: CF_REPORT_GROUP
    resources:
        **JOB_RESOURCES.of("cf_tables"),
    log:
        "logs/cf_tasks/tables.log",
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/cf_tasks/tables.py"
