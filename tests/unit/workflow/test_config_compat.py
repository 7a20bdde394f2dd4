"""Renamed config names are read under their old names for one release, with a warning."""

from __future__ import annotations

from benchcast.workflow.support import rename_old_config


def test_the_deploy_study_and_benchpress_deploy_key_move_to_their_new_names():
    config = {
        "studies": ["misses_the_mark", "deploy"],
        "deploy": {"datasets": ["musr"]},
        "benchpress": {"deploy": {"k_known": [5]}, "max_folds": 3},
    }
    warnings = rename_old_config(config)
    assert config == {
        "studies": ["misses_the_mark", "heldout_intervals"],
        "heldout_intervals": {"datasets": ["musr"]},
        "benchpress": {"complete": {"k_known": [5]}, "max_folds": 3},
    }
    assert len(warnings) == 3 and all("until the next release" in w for w in warnings)
    assert "'benchpress.deploy' is now 'benchpress.complete'" in warnings[2]


def test_a_current_config_is_left_alone():
    config = {"studies": ["heldout_intervals"], "heldout_intervals": {}, "benchpress": {"complete": {}}}
    assert rename_old_config(config) == [] and config["benchpress"] == {"complete": {}}


def test_every_studys_repeated_trials_are_trials_and_the_old_keys_still_read():
    config = {
        "tailoredbench": {"runs": 7},
        "cf_tasks": {"repeats": 3},
        "benchpress": {"hypotheses": {"n_seeds": 4, "peer_baseline": "paper"}},
        "misses_the_mark": {"trials": 5},
    }
    warnings = rename_old_config(config)
    assert config == {
        "tailoredbench": {"trials": 7},
        "cf_tasks": {"trials": 3},
        "benchpress": {"hypotheses": {"trials": 4, "peer_baseline": "paper"}},
        "misses_the_mark": {"trials": 5},
    }
    assert sorted(w.split("config key ")[1].split(";")[0] for w in warnings) == [
        "'benchpress.hypotheses.n_seeds' is now 'benchpress.hypotheses.trials'",
        "'cf_tasks.repeats' is now 'cf_tasks.trials'",
        "'tailoredbench.runs' is now 'tailoredbench.trials'",
    ]


def test_every_study_schema_names_its_repeated_trials_trials():
    """One word per idea: no study schema has a top-level runs / repeats / n_seeds key for its trials."""
    import yaml
    from helpers import REPO

    for schema in sorted((REPO / "workflow" / "schemas").glob("*.schema.yaml")):
        text = yaml.safe_load(schema.read_text())
        props = text.get("properties", {})
        nested = [p.get("properties", {}) for p in props.values() if isinstance(p, dict)]
        for keys in [props, *nested]:
            assert not {"runs", "n_seeds"} & set(keys), schema.name
        assert "repeats" not in props, schema.name


def test_an_old_key_is_the_users_and_wins_over_the_new_one_from_the_defaults():
    """Snakemake merges the default config (new names) with the user's file (old names) first."""
    config = {
        "benchpress": {
            "hypotheses": {"trials": 10, "n_seeds": 2},
            "complete": {"k": [3], "repeats": 2},
            "deploy": {"k": [5]},
        }
    }
    warnings = rename_old_config(config)
    assert config == {"benchpress": {"hypotheses": {"trials": 2}, "complete": {"k": [5], "repeats": 2}}}
    assert len(warnings) == 2
