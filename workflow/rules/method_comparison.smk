# Every method under every protocol: the methods config method_comparison lists run under each protocol
# study's grid, through that study's own rules and files (loaded before this file: workflow/rules/
# common.smk), then one scores job per protocol and one tables job. benchcast.studies.method_comparison.

from benchcast.studies.method_comparison.study import FIGURES as MC_FIGURES, SCORES as MC_SCORES  # noqa: E402
from benchcast.studies import registry as _mc_registry  # noqa: E402

MC_STUDY = load_study("method_comparison")
MC = MC_STUDY.config
MC_TABLES = MC_STUDY.tables()


rule method_comparison:
    """Every output of the comparison (also part of `all` when `studies` lists it)."""
    input:
        MC_STUDY.outputs(),


rule mc_scores:
    """Every compared method's result files under one protocol, scored per trial."""
    input:
        runs=lambda w: [r["path"] for r in MC_STUDY.runs(w.protocol)],
    output:
        scores=MC_SCORES,
    wildcard_constraints:
        protocol=names_regex(MC["protocols"]),
    params:
        runs=lambda w: [{k: r[k] for k in ("method", "budget", "group")} for r in MC_STUDY.runs(w.protocol)],
        settings=lambda w: MC_STUDY.others[w.protocol].protocol_settings(),
    resources:
        **JOB_RESOURCES.of("mc_scores"),
    log:
        "logs/method_comparison/scores/{protocol}.log",
    benchmark:
        "benchmarks/method_comparison/scores/{protocol}.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/method_comparison/scores.py"


rule mc_tables:
    """One ranking per protocol, the summary of them all and the rank figure."""
    input:
        **{p: MC_SCORES.format(protocol=p) for p in MC["protocols"]},
    output:
        **{p: report(MC_TABLES[p], caption="../report/method_comparison/ranking.rst", category="Method comparison", labels={"protocol": p}) for p in MC["protocols"]},
        **{f"{p}_md": MC_TABLES[p].replace(".csv", ".md") for p in MC["protocols"]},
        summary=report(MC_TABLES["summary"], caption="../report/method_comparison/summary.rst", category="Method comparison", labels={"protocol": "all"}),
        summary_md=MC_TABLES["summary"].replace(".csv", ".md"),
        figure=report(f"{MC_FIGURES}/ranks.png", caption="../report/method_comparison/summary.rst", category="Method comparison", labels={"protocol": "figure"}),
    params:
        methods={p: MC_STUDY.methods(p) for p in MC["protocols"]},
        described={p: _mc_registry()[p].protocol_score for p in MC["protocols"]},
    resources:
        **JOB_RESOURCES.of("mc_tables"),
    log:
        "logs/method_comparison/tables.log",
    benchmark:
        "benchmarks/method_comparison/tables.tsv"
    conda:
        BENCHCAST_ENV
    script:
        "../scripts/method_comparison/tables.py"
