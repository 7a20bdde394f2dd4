# BenchPress ("You don't need to run every eval"), Section 4: every (transform, method) pair of the
# 7 x 12 grid is one job running all its hyper-parameter settings on the paper's 30 held-out folds;
# then per-fold metrics, Table 11 / Table 3 / Figure 11 and the comparison with the paper.

from benchcast.studies.benchpress.study import (  # noqa: E402
    FIGURES as BP_FIGS, GRID_GROUP as BP_GRID_GROUP, METRICS as BP_METRICS, RELIABILITY as BP_RELIABILITY,
    RUNS as BP_RUNS, TABLES as BP_TABLES,
)

BP_STUDY = load_study("benchpress")
BP = BP_STUDY.config
BP_MATRIX = BP_STUDY.data()

# (transform, method) -> its settings; the study's build refused unknown transforms and methods
BP_GRID = BP_STUDY.grid
# The paper's held-out folds and the low-cost allow-list (Section 5), from the dataset's catalog entry.
BP_FOLDS = catalog_file(BP["dataset"], "folds", "benchpress (the paper's held-out folds JSON, files.folds)")

wildcard_constraints:
    transform="[a-z]+",
    bpmethod="[a-z_]+",


rule benchpress:
    """Every output of the study (snakemake benchpress --cores all --configfile config/benchpress.yaml)."""
    input:
        BP_STUDY.outputs(),


# Longest BenchPress jobs first (measured, quick default config: hypotheses 70 s, probes 54 s,
# reliability 21 s, geometry 16 s, temporal 13 s; full study: reliability ~11 CPU min), so none of
# them starts last and becomes a run's tail. Scheduling only: results do not depend on it.


rule bp_paper_vs_ours:
    """Every BenchPress number we reproduce next to the paper's, in one table."""
    input:
        grid=f"{BP_TABLES}/grid_paper_vs_ours.csv",
        geometry=f"{BP_TABLES}/geometry_paper_vs_ours.csv",
        reliability=f"{BP_TABLES}/reliability_paper_vs_ours.csv",
        section5=f"{BP_TABLES}/section5_paper_vs_ours.csv",
        hypotheses=f"{BP_TABLES}/hypotheses_paper_vs_ours.csv",
        matrix=f"{BP_TABLES}/matrix_summary.csv",
        predictability=f"{BP_TABLES}/predictability_summary.csv",
        paper=BP["paper_values"],
    output:
        csv=f"{BP_TABLES}/paper_vs_ours.csv",
        md=f"{BP_TABLES}/paper_vs_ours.md",
    params:
        tolerance=BP["tolerance"]["cells"],
        # a slice (fewer settings, folds or seeds than the paper's) is judged as one (benchpress.analysis.judge)
        settings=len(BP["transforms"]) * len(BP["methods"]),
        folds=BP["max_folds"] or 30,
        seeds=min(BP["section5"]["random_seeds"], BP["section5"]["temporal_seeds"], BP["hypotheses"]["trials"]),
        slice=not BP_STUDY.full_run,
        run=BP_STUDY.run_words(),
    resources:
        **JOB_RESOURCES.of("bp_paper_vs_ours"),
    log:
        "logs/benchpress/paper_vs_ours.log",
    benchmark:
        "benchmarks/benchpress/paper_vs_ours.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/paper_vs_ours.py"


rule bp_grid:
    """One (transform, method) pair of the grid: every hyper-parameter setting on every fold."""
    input:
        **BP_MATRIX,
        folds=BP_FOLDS,
    output:
        BP_RUNS,
    params:
        grid=lambda w: BP_GRID[(w.transform, w.bpmethod)],
        percentage_rule=BP["percentage_rule"],
        max_folds=BP["max_folds"],
    # SLURM only (local runs ignore groups): grid jobs share submissions, workflow/profiles/slurm's
    # group-components sets how many
    group: BP_GRID_GROUP
    resources:
        **JOB_RESOURCES.of("bp_grid", "bpmethod"),
    log:
        "logs/benchpress/grid/{transform}/{bpmethod}.log",
    benchmark:
        "benchmarks/benchpress/grid/{transform}/{bpmethod}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/grid.py"


rule bp_metrics:
    """Per-fold MedAPE / MedAE / coverage of every grid setting, and their medians over folds."""
    input:
        [BP_RUNS.format(transform=t, bpmethod=m) for t, m in BP_GRID],
    output:
        per_fold=f"{BP_METRICS}/grid_per_fold.parquet",
        summary=f"{BP_METRICS}/grid_summary.parquet",
    resources:
        **JOB_RESOURCES.of("bp_metrics"),
    log:
        "logs/benchpress/metrics.log",
    benchmark:
        "benchmarks/benchpress/metrics.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/metrics.py"


rule bp_tables:
    """Table 11 (best setting per pair), Table 3 (top 15 per metric), Figure 11, paper vs ours."""
    input:
        summary=f"{BP_METRICS}/grid_summary.parquet",
        paper=BP["paper_values"],
    output:
        table11=f"{BP_TABLES}/table11.csv",
        table11_md=f"{BP_TABLES}/table11.md",
        table3=f"{BP_TABLES}/table3.csv",
        table3_md=f"{BP_TABLES}/table3.md",
        paper_vs_ours=f"{BP_TABLES}/grid_paper_vs_ours.csv",
        acceptance=f"{BP_TABLES}/grid_acceptance.csv",
        figure11=report(f"{BP_FIGS}/figure11.png", caption="../report/benchpress/figure11.rst", category="BenchPress"),
    params:
        default=BP["default_predictor"],
        tolerance=BP["tolerance"],
    resources:
        **JOB_RESOURCES.of("bp_tables"),
    log:
        "logs/benchpress/tables.log",
    benchmark:
        "benchmarks/benchpress/tables.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/tables.py"


rule bp_reliability:
    """Section 6.2 / App. E.2: fold predictions of the 15 configurations behind the ensemble-spread
    features, the three reliability estimators cross-fitted over folds (Figure 10), conformal
    intervals, trust calibration, and the paper's final hybrid model (calibrated on the folds;
    `benchcast complete` uses bp_complete's, calibrated for new models)."""
    input:
        **BP_MATRIX,
        folds=BP_FOLDS,
        paper=BP["paper_values"],
    output:
        features="results/runs/benchpress/reliability/fold_features.parquet",
        risk_coverage=f"{BP_TABLES}/figure10_risk_coverage.csv",
        conformal=f"{BP_TABLES}/conformal.csv",
        trust=f"{BP_TABLES}/trust_calibration.csv",
        architectures=f"{BP_TABLES}/reliability_architectures.csv",
        paper_vs_ours=f"{BP_TABLES}/reliability_paper_vs_ours.csv",
        figure10=report(f"{BP_FIGS}/figure10.png", caption="../report/benchpress/figure10.rst", category="BenchPress"),
        model="results/models/benchpress/reliability_folds.json",
    params:
        max_folds=BP["max_folds"],
        reliability=BP["reliability"],
    threads: 2
    priority: 9
    resources:
        **JOB_RESOURCES.of("bp_reliability"),
        slurm_extra=slurm_nice(9),
    log:
        "logs/benchpress/reliability.log",
    benchmark:
        "benchmarks/benchpress/reliability.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/reliability.py"


rule bp_geometry:
    """Section 3.3 / Table 1: the held-out Soft-Impute rank sweep in raw and logit space (Figure 4),
    the SVD of complete submatrices (Table 2) and the threshold filter (Table 1 rows reproducible
    from the released 84 x 133 matrix)."""
    input:
        **BP_MATRIX,
        folds=BP_FOLDS,
        paper=BP["paper_values"],
    output:
        sweep=f"{BP_TABLES}/figure4_rank_sweep.csv",
        figure4=report(f"{BP_FIGS}/figure4.png", caption="../report/benchpress/figure4.rst", category="BenchPress"),
        table2=f"{BP_TABLES}/table2.csv",
        table1=f"{BP_TABLES}/table1.csv",
        paper_vs_ours=f"{BP_TABLES}/geometry_paper_vs_ours.csv",
    params:
        max_folds=BP["max_folds"],
        ranks=BP["rank_sweep"],
        submatrix_benchmark_counts=BP["submatrix_benchmark_counts"],
    priority: 7
    resources:
        **JOB_RESOURCES.of("bp_geometry"),
        slurm_extra=slurm_nice(7),
    log:
        "logs/benchpress/geometry.log",
    benchmark:
        "benchmarks/benchpress/geometry.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/geometry.py"


rule bp_ranking:
    """Table 6: pairwise ranking preservation of the default predictor's held-out predictions."""
    input:
        **BP_MATRIX,
        folds=BP_FOLDS,
    output:
        f"{BP_TABLES}/table6.csv",
    params:
        max_folds=BP["max_folds"],
        margins=BP["section5"]["margins"],
    resources:
        **JOB_RESOURCES.of("bp_ranking"),
    log:
        "logs/benchpress/ranking.log",
    benchmark:
        "benchmarks/benchpress/ranking.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/ranking.py"


rule bp_temporal:
    """Section 5.3: new models predicted from older models plus k revealed scores (Figure 7, Table 16)."""
    input:
        **BP_MATRIX,
    output:
        per_seed="results/runs/benchpress/temporal.parquet",
        table16=f"{BP_TABLES}/table16.csv",
        figure7=f"{BP_TABLES}/figure7.csv",
        figure7_png=report(f"{BP_FIGS}/figure7.png", caption="../report/benchpress/figure7.rst", category="BenchPress"),
    params:
        ks=BP["section5"]["temporal_ks"],
        n_seeds=BP["section5"]["temporal_seeds"],
        partial=BP["section5"]["partial_dates"],
        window=BP["section5"]["temporal_window"],
        min_observed=BP["section5"]["temporal_min_observed"],
    priority: 7
    resources:
        **JOB_RESOURCES.of("bp_temporal"),
        slurm_extra=slurm_nice(7),
    log:
        "logs/benchpress/temporal.log",
    benchmark:
        "benchmarks/benchpress/temporal.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/temporal.py"


rule bp_probes:
    """Sections 5.1-5.2: greedy probe sets (Table 5, Figure 5, Figure 1(b)), the random baseline,
    ranking accuracy along each prefix (Figure 6)."""
    input:
        **BP_MATRIX,
        allowlist=catalog_file(BP["dataset"], "allowlist", "benchpress Section 5 (the low-cost allow-list)"),
    output:
        table5=f"{BP_TABLES}/table5.csv",
        random=f"{BP_TABLES}/figure5_random_baseline.csv",
        figure6=f"{BP_TABLES}/figure6.csv",
        figure5_png=report(f"{BP_FIGS}/figure5.png", caption="../report/benchpress/figure5.rst", category="BenchPress"),
    params:
        steps=BP["section5"]["probe_steps"],
        runs=BP["section5"]["probe_runs"],   # objective/pool
        n_random_seeds=BP["section5"]["random_seeds"],
    priority: 9
    resources:
        **JOB_RESOURCES.of("bp_probes"),
        slurm_extra=slurm_nice(9),
    log:
        "logs/benchpress/probes.log",
    benchmark:
        "benchmarks/benchpress/probes.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/probes.py"


rule bp_section5_summary:
    """Section 5 headline numbers next to the paper's."""
    input:
        table5=f"{BP_TABLES}/table5.csv",
        table6=f"{BP_TABLES}/table6.csv",
        figure7=f"{BP_TABLES}/figure7.csv",
        paper=BP["paper_values"],
    output:
        f"{BP_TABLES}/section5_paper_vs_ours.csv",
    resources:
        **JOB_RESOURCES.of("bp_section5_summary"),
    log:
        "logs/benchpress/section5_summary.log",
    benchmark:
        "benchmarks/benchpress/section5_summary.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/section5_summary.py"


rule bp_hypotheses:
    """Section 6.1: benchmark-side H1-H7 (Table 7) and model-side H1-H9 (Table 8), each under MedAPE
    and MedAE, with the paper's p-values side by side."""
    input:
        **BP_MATRIX,
        folds=BP_FOLDS,
        paper=BP["paper_values"],
    output:
        table7=f"{BP_TABLES}/table7.csv",
        table8=f"{BP_TABLES}/table8.csv",
        paper_vs_ours=f"{BP_TABLES}/hypotheses_paper_vs_ours.csv",
        predictability=f"{BP_TABLES}/predictability_summary.csv",
        predictability_benchmark=f"{BP_TABLES}/predictability_per_benchmark.csv",
        predictability_model=f"{BP_TABLES}/predictability_per_model.csv",
    params:
        max_folds=BP["max_folds"],
        trials=BP["hypotheses"]["trials"],
        peer_baseline=BP["hypotheses"]["peer_baseline"],
    priority: 9
    resources:
        **JOB_RESOURCES.of("bp_hypotheses"),
        slurm_extra=slurm_nice(9),
    log:
        "logs/benchpress/hypotheses.log",
    benchmark:
        "benchmarks/benchpress/hypotheses.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/hypotheses.py"


rule bp_table17:
    """Table 17: conformal interval widths and coverage at several levels, from the cross-fitted risks."""
    input:
        "results/runs/benchpress/reliability/fold_features.parquet",
    output:
        f"{BP_TABLES}/table17.csv",
    params:
        levels=BP["conformal_levels"],
    resources:
        **JOB_RESOURCES.of("bp_table17"),
    log:
        "logs/benchpress/table17.log",
    benchmark:
        "benchmarks/benchpress/table17.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/table17.py"


rule bp_matrix_figures:
    """Figures 2-3 / Section 3.2: observation pattern and composition of the score matrix."""
    input:
        **BP_MATRIX,
    output:
        figure2=report(f"{BP_FIGS}/figure2.png", caption="../report/benchpress/figure2.rst", category="BenchPress"),
        figure3=report(f"{BP_FIGS}/figure3.png", caption="../report/benchpress/figure2.rst", category="BenchPress"),
        summary=f"{BP_TABLES}/matrix_summary.csv",
        by_category=f"{BP_TABLES}/matrix_by_category.csv",
        by_quarter=f"{BP_TABLES}/matrix_by_quarter.csv",
        provenance=f"{BP_TABLES}/matrix_provenance.csv",
    resources:
        **JOB_RESOURCES.of("bp_matrix_figures"),
    log:
        "logs/benchpress/matrix_figures.log",
    benchmark:
        "benchmarks/benchpress/matrix_figures.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/matrix_figures.py"


rule bp_complete:
    """The reliability model `benchcast complete` uses, calibrated for a genuinely new model: every
    calibration model is removed from the matrix and completed from k of its scores."""
    input:
        **BP_MATRIX,
    output:
        model="results/models/benchpress/reliability.json",
        cells="results/runs/benchpress/complete/calibration_cells.parquet",
        by_k=f"{BP_TABLES}/complete_calibration.csv",
    params:
        complete={k: v for k, v in BP["complete"].items() if k != "check"},
        reliability=BP["reliability"],
    threads: 2
    priority: 8
    resources:
        **JOB_RESOURCES.of("bp_complete"),
        slurm_extra=slurm_nice(8),
    log:
        "logs/benchpress/complete.log",
    benchmark:
        "benchmarks/benchpress/complete.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/complete.py"


rule bp_new_model_check:
    """Acceptance of complete's reliability model: held-out models removed from the matrix, the model rebuilt
    without them, each completed from k known scores; interval coverage and trust calibration."""
    input:
        **BP_MATRIX,
    output:
        cells="results/runs/benchpress/complete/new_model_check.parquet",
        summary=f"{BP_TABLES}/new_model_check.csv",
        md=f"{BP_TABLES}/new_model_check.md",
    params:
        complete=BP["complete"],
        reliability=BP["reliability"],
    threads: 2
    priority: 8
    resources:
        **JOB_RESOURCES.of("bp_new_model_check"),
        slurm_extra=slurm_nice(8),
    log:
        "logs/benchpress/new_model_check.log",
    benchmark:
        "benchmarks/benchpress/new_model_check.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/benchpress/new_model_check.py"
