"""The MDAD study's plan: which cells run, and config errors before any job."""

import pytest

from benchcast.data.catalog import DEFAULT_CATALOG, load_catalog
from benchcast.errors import ConfigError
from benchcast.studies.mdad.jobs import Jobs

CATALOG = load_catalog(DEFAULT_CATALOG)


def config(**overrides):
    base = {
        "datasets": ["mdad_gpqa", "musr"],
        "n_targets": 50,
        "n_sources": [10, 300, 400],
        "sizes": {"default": [10, 250, 500], "mdad_gpqa": [10, 200, 250]},
        "methods": [{"name": "random_sampling"}, {"name": "tinybenchmarks", "params": {"irt": {"dims": 2}}}],
    }
    return {**base, **overrides}


def test_cells_keep_sizes_below_the_seen_half_and_sources_beside_the_targets():
    plan = Jobs(config(), CATALOG)
    gpqa = plan.cell("mdad_gpqa", "random_sampling", 300)
    assert gpqa.sizes == (10, 200)  # 250 is not below GPQA's 224-item seen half
    assert plan.cell("musr", "tinybenchmarks", 10).sizes == (10, 250)  # MuSR's seen half: 378 items
    assert {c.n_source for c in plan.cells} == {10, 300}  # 400 + 50 targets > 420 / 448 models
    assert plan.methods["tinybenchmarks"] == {"irt": {"dims": 2}}
    assert len(plan.run_files()) == 2 * 2 * 2
    assert plan.run_files()[0] == "results/runs/mdad/mdad_gpqa/random_sampling/n_source=10.parquet"
    assert plan.same_size_cells() == [] and "table" not in plan.same_size_outputs()
    grouped = Jobs(config(same_size={"groups": {"g": {"datasets": ["musr"], "params_b": [7, 8]}}}), CATALOG)
    assert grouped.same_size_cells() == [("musr", "g", "random_sampling"), ("musr", "g", "tinybenchmarks")]


def test_cross_paper_methods_run_the_largest_source_count_and_their_own_smallest_budget():
    cross = {"methods": [{"name": "aipw", "params": {"alpha": 10.0}}, {"name": "tailoredbench"}]}
    plan = Jobs(config(cross_paper=cross), CATALOG)
    assert plan.selectors == ["random_sampling", "tinybenchmarks"]
    assert list(plan.methods) == ["random_sampling", "tinybenchmarks", "aipw", "tailoredbench"]
    assert {c.n_source for c in plan.cells if c.method == "aipw"} == {300}  # the selectors: 10 and 300
    assert plan.cell("musr", "aipw", 300).sizes == (10, 250)
    assert plan.cell("musr", "tailoredbench", 300).sizes == (250,)  # k = 10 cannot hold its 10-item G-set and more
    grouped = Jobs(config(cross_paper=cross, same_size={"groups": {"g": {"datasets": ["musr"]}}}), CATALOG)
    assert {m for _, _, m in grouped.same_size_cells()} == {"random_sampling", "tinybenchmarks"}
    with pytest.raises(ConfigError, match="listed twice"):
        Jobs(config(cross_paper={"methods": [{"name": "random_sampling"}]}), CATALOG)
    with pytest.raises(ConfigError, match="tailoredbench needs a budget of at least 11"):
        Jobs(config(sizes={"default": [10]}, cross_paper={"methods": [{"name": "tailoredbench"}]}), CATALOG)


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"methods": [{"name": "nope"}]}, "unknown method 'nope'"),
        ({"methods": [{"name": "dpp"}, {"name": "dpp"}]}, "listed twice"),
        ({"sizes": {"default": [500]}, "datasets": ["mdad_gpqa"]}, "leaves no size"),
        ({"n_sources": [400]}, "leaves no size below its seen half or no source count"),
        ({"same_size": {"groups": {"g": {"datasets": ["ifeval"]}}}}, "not in mdad.datasets"),
    ],
)
def test_config_errors(overrides, message):
    with pytest.raises(ConfigError, match=message):
        Jobs(config(**overrides), CATALOG)
