# Config validation (JSON schema with defaults), the catalog, and helpers shared by rules.
import dataclasses
import re
import sys
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("9.0")

validate(config, schema="../schemas/config.schema.yaml")

sys.path.insert(0, str(Path(workflow.basedir) / "src"))  # run from a clone without pip install -e
from benchcast.data.catalog import load_catalog  # noqa: E402
from benchcast.data.item_level import iter_item_datasets  # noqa: E402
from benchcast.methods import REGISTRY  # noqa: E402
from benchcast.data.raw_files import check_raw_dir, download_targets, mirror_file  # noqa: E402
from benchcast.errors import ConfigError  # noqa: E402
from benchcast.workflow_support import exit_without_idle_tail  # noqa: E402

if not exit_without_idle_tail():
    print("benchcast: this Snakemake has no JobScheduler._schedule_reevalutation; runs may end with up to "
          "60 s of idle time (profiles/default max-jobs-per-timespan)", file=sys.stderr)

CATALOG = load_catalog(config["catalog"])
RAW_DIR = config["raw_dir"]
check_raw_dir(RAW_DIR)
URL_TEMPLATE = config.get("url_template") or CATALOG.url_template
DOWNLOAD_SOURCES, DOWNLOAD_PATHS = download_targets(CATALOG)
MTM = config["misses_the_mark"]

# Fail at parse time, with the fix, rather than deep inside a job (for the studies `all` builds).
if "misses_the_mark" in config["studies"]:
    iter_item_datasets(MTM["datasets"], CATALOG)
# Every dataset the selected studies read (rule `data` ingests them, downloading first in download mode).
STUDY_DATASETS = list(MTM["datasets"]) if "misses_the_mark" in config["studies"] else []
if "benchpress" in config["studies"]:
    STUDY_DATASETS.append(config["benchpress"]["dataset"])
MTM_METHODS = [m.get("label", m["name"]) for m in MTM["methods"]]  # the {method} wildcard
MTM_METHOD_NAME = {m.get("label", m["name"]): m["name"] for m in MTM["methods"]}
MTM_METHOD_PARAMS = {m.get("label", m["name"]): dict(m.get("params", {})) for m in MTM["methods"]}
for _m in MTM_METHOD_NAME.values():
    if _m not in REGISTRY:
        raise ConfigError(
            f"config misses_the_mark.methods: unknown method '{_m}'. Known: {', '.join(sorted(REGISTRY))}"
        )
if len(set(MTM_METHODS)) != len(MTM_METHODS):
    raise ConfigError("config misses_the_mark.methods: a method is listed twice; give repeats a distinct label")

wildcard_constraints:
    dataset="[A-Za-z0-9_]+",
    split="interpolation|extrapolation",
    method="[a-z0-9_]+",
    n=r"\d+",


def names_regex(names):
    """Wildcard regex matching exactly these names (and nothing when the list is empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def catalog_entry(name):
    return dataclasses.asdict(CATALOG[name])


def ingested(dataset):
    """The file that stands for a dataset's ingest (its main table)."""
    table = "scores" if CATALOG[dataset].kind == "aggregate" else "responses"
    return f"results/data/{dataset}/{table}.parquet"


def raw_inputs(wildcards):
    """Every file of the dataset, by role: raw files under raw_dir, `source: repo` files (e.g. the
    BenchPress benchmark inventory) under the workflow's repository, so editing them reruns the ingest.
    A file missing from a mirror stops the run before any job, naming the file and raw_dir."""
    spec = CATALOG[wildcards.dataset]
    return {role: str(mirror_file(spec, role, RAW_DIR, repo_dir=workflow.basedir)) for role in spec.files}
