# What every study uses: the shared config (validated here; each study validates its own key when
# selected), the catalog, the study registry, and the helpers of the shared data rules.
import dataclasses
import re
import sys
from pathlib import Path

from snakemake.common.configfile import load_configfile
from snakemake.utils import min_version

min_version("9.0")

sys.path.insert(0, str(Path(workflow.basedir) / "src"))  # run from a clone without pip install -e
from benchcast.data.catalog import load_catalog, shipped_catalog  # noqa: E402
from benchcast.data.raw_files import check_raw_dir, download_targets, mirror_file  # noqa: E402
from benchcast.errors import ConfigError, did_you_mean  # noqa: E402
from benchcast.studies import build_studies, registry as study_registry  # noqa: E402
from benchcast.workflow.resources import JobResources, slurm_nice  # noqa: E402
from benchcast.data.item_level import dataset_tables  # noqa: E402
from benchcast.workflow.support import (  # noqa: E402
    deep_update, exit_without_idle_tail, included_files, rename_old_config, resolve_includes,
)
from benchcast.workflow.config_check import (  # noqa: E402
    ConfigSources, check_top_level, check_url_template, load_schema, located, validate,
)

# A config file may list others under `include:` (config/all_papers.yaml): they are merged between the
# default config and the command line's files (benchcast.workflow.support.resolve_includes).
_included = resolve_includes(
    load_configfile(Path(workflow.basedir) / "config" / "config.yaml"),
    workflow.config_settings.overwrite_config,
    Path.cwd(),
)
if _included is not None:
    config.clear()
    config.update(_included)
for _warning in rename_old_config(config):  # renamed config names (CHANGELOG.md)
    print(_warning, file=sys.stderr)

# The config is checked here, before any job (benchcast.workflow.config_check): unknown keys, the
# schemas (each study's when load_study builds it), every method's parameters (the studies' Jobs). An
# error is one line naming the key and the file (or --config) that set it.
_cli = workflow.config_settings
_given = {Path(f).resolve() for f in _cli.configfiles}
CONFIG_SOURCES = ConfigSources.from_run(
    [f for f in workflow.configfiles if Path(f).resolve() not in _given],  # the Snakefile's configfile:
    included_files(_cli.overwrite_config) or [],
    _cli.configfiles,
    _cli.config,
)
SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"
# The study registry: every folder of src/benchcast/studies with a study.py (benchcast.studies.registry;
# the contract is benchcast.studies.contract). A study S is also workflow/rules/S.smk (its rules and
# target rule S), workflow/schemas/S.schema.yaml (config key S), workflow/scripts/S/ and
# workflow/report/S/; its rules file calls load_study("S"), which registers what the shared rules read.
STUDIES = tuple(study_registry())
_schema = load_schema(SCHEMAS / "config.schema.yaml")
check_top_level(config, _schema, STUDIES, CONFIG_SOURCES)
validate(config, _schema, None, CONFIG_SOURCES)
check_url_template(config["url_template"], CONFIG_SOURCES)

if not exit_without_idle_tail():
    print("benchcast: the idle-tail fix was checked on Snakemake 9.27.1 (requirements.txt) only; with this "
          "version runs may end with up to 60 s of idle time (profiles/default max-jobs-per-timespan)",
          file=sys.stderr)

for _study in config["studies"]:
    if _study not in STUDIES:
        raise ConfigError(
            f"{CONFIG_SOURCES.prefix('studies')}config studies: unknown study '{_study}'"
            f"{did_you_mean(_study, STUDIES) or '.'} Known: {', '.join(STUDIES)}"
        )
STUDY_OUTPUTS = {}  # study -> its final outputs (rule all, its target rule)
STUDY_DATASETS = {}  # study -> the catalog datasets it reads (rule data)
# For results/index.md (workflow/rules/overview.smk, benchcast.workflow.paper_index): the paper's
# title and file, the tolerance in words, the paper-vs-ours CSV and [section, [outputs]] pairs. A study
# without one is left out of the index.
STUDY_INDEX = {}
# The paper's own published cost per method label (or "(all)" for the study), for the performance table.
STUDY_COSTS = {}

# Cluster requests (runtime, mem_mb) per rule and method, sized from measured benchmark files
# (benchcast.workflow.resources; regenerate with scripts/resources_table.py); local runs ignore them.
JOB_RESOURCES = JobResources.load(Path(workflow.basedir) / "workflow" / "resources.csv")

# Every rule runs in this environment under --sdm conda (the pip install of requirements.txt).
BENCHCAST_ENV = "../envs/benchcast.yaml"

config["catalog"] = config["catalog"] or shipped_catalog()  # null: the catalog shipped with benchcast
CATALOG = load_catalog(config["catalog"])
RAW_DIR = config["raw_dir"]
check_raw_dir(RAW_DIR)
URL_TEMPLATE = config.get("url_template") or CATALOG.url_template
DOWNLOAD_SOURCES, DOWNLOAD_PATHS = download_targets(CATALOG)

wildcard_constraints:
    dataset="[A-Za-z0-9_]+",
    split="interpolation|extrapolation",
    method="[a-z0-9_]+",
    n=r"\d+",


def study_config(study):
    """config[study], validated against workflow/schemas/<study>.schema.yaml, defaults filled in."""
    section = config.setdefault(study, {})
    validate(section, load_schema(SCHEMAS / f"{study}.schema.yaml"), study, CONFIG_SOURCES)
    return section


def full_study_section(name):
    """config[name] as a run of the study's own config file would have it (the default config, then
    that file, merged key by key; validated, defaults filled in), or None when it has none."""
    path = study_registry()[name].config_path()
    if not path or not (Path(workflow.basedir) / path).is_file():
        return None
    merged = load_configfile(Path(workflow.basedir) / "config" / "config.yaml")
    deep_update(merged, load_configfile(Path(workflow.basedir) / path))
    section = merged.get(name, {})
    validate(section, load_schema(SCHEMAS / f"{name}.schema.yaml"), name, ConfigSources.from_run([Path(workflow.basedir) / path], [], [], {}))
    return section


# The studies of this run (benchcast.studies.build_studies): the selected ones and those a selected
# study asks to run methods under their protocols (method_comparison), built before any rule loads;
# their rules files load in this order (RULE_STUDIES: the Snakefile's includes); only the selected
# studies' outputs are built.
try:
    BUILT = build_studies(config["studies"], study_config, CATALOG)
except ConfigError as exc:  # its key's file (or --config) in front
    raise located(exc, CONFIG_SOURCES) from None
RULE_STUDIES = list(BUILT)


def load_study(name):
    """The study ``name`` for this run (its benchcast.studies.Study, built on its validated config),
    with its outputs, datasets, index entry and costs registered for the shared rules; whether the run
    is the study's full run (its own config file's) or a slice of it is the study's ``full_run``."""
    unit = BUILT[name]
    full = full_study_section(name)
    unit.full_run = None if full is None else unit.config == full
    STUDY_OUTPUTS[name] = unit.outputs()
    STUDY_DATASETS[name] = unit.datasets()
    entry = unit.index()
    if entry is not None:
        STUDY_INDEX[name] = entry
    STUDY_COSTS[name] = unit.costs()
    return unit


def names_regex(names):
    """Wildcard regex matching exactly these names (and nothing when the list is empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def catalog_entry(name):
    return dataclasses.asdict(CATALOG[name])


def catalog_file(dataset, role, needed_by):
    """The local path of one file of a catalog entry (raw_dir, or the catalog's repo_root for `source: repo`)."""
    if dataset not in CATALOG.datasets:
        raise ConfigError(f"{needed_by}: dataset '{dataset}' is not in the catalog {config['catalog']}")
    spec = CATALOG[dataset]
    if role not in spec.files:
        raise ConfigError(f"catalog entry '{dataset}' has no '{role}' file (needed by {needed_by})")
    return str(spec.local_path(RAW_DIR, role, repo_dir=CATALOG.repo_root))


def ingested(dataset):
    """The file that stands for a dataset's ingest (its main table)."""
    table = "scores" if CATALOG[dataset].kind == "aggregate" else "responses"
    return f"results/data/{dataset}/{table}.parquet"


def raw_inputs(wildcards):
    """Every file of the dataset, by role: raw files under raw_dir, `source: repo` files (e.g. the
    BenchPress benchmark inventory) under the catalog's repo_root, so editing them reruns the ingest.
    A file missing from a mirror stops the run before any job, naming the file and raw_dir. A folder of
    harness logs (format lm_eval_logs) also lists its log files, so editing one reruns the ingest.

    A raw file whose sha256 the catalog pins is known by that pin, not by its date: the pin is in the
    ingest's params (its catalog entry) and the ingest refuses other bytes, so a mirror copied again
    (new dates, same bytes: a re-staged cluster scratch, a fresh download) reruns nothing, and a new
    pin reruns the ingest. Files without a pin, and `source: repo` files, keep Snakemake's dates."""
    spec = CATALOG[wildcards.dataset]
    files = {}
    for role, raw in spec.files.items():
        path = str(mirror_file(spec, role, RAW_DIR, repo_dir=CATALOG.repo_root))
        files[role] = ancient(path) if raw.sha256 and not raw.in_repo else path
    if spec.format == "lm_eval_logs":
        files["log_files"] = sorted(str(p) for p in Path(files["logs"]).rglob("samples_*.jsonl"))
    return files
