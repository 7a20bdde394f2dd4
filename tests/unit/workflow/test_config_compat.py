"""Config names renamed in 0.2.0 are read under their old names for one release, with a warning."""

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
