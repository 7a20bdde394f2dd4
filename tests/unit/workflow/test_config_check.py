"""The workflow's config checked before any job (benchcast.workflow.config_check, and every study's
methods through benchcast.methods.make_method): one line naming the key, the file and the fix."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import yaml
from helpers import REPO
from snakemake.utils import validate as snakemake_validate

from benchcast.completion.completers import COMPLETERS
from benchcast.data.catalog import load_catalog
from benchcast.errors import ConfigError, check_keywords, keyword_names
from benchcast.methods import REGISTRY, make_method
from benchcast.methods.collaborative_filtering import CFSettings
from benchcast.studies import build_studies, registry
from benchcast.workflow.config_check import (
    ConfigSources,
    check_top_level,
    check_url_template,
    load_schema,
    located,
    validate,
)

SCHEMAS = REPO / "workflow" / "schemas"
STUDIES = tuple(registry())


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml")


def sources(tmp_path, file_config: dict, command_line: dict | None = None) -> ConfigSources:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(file_config))
    return ConfigSources.from_run([], [], [path], command_line or {})


def test_a_misspelt_top_level_key_is_refused_naming_where_it_came_from(tmp_path):
    schema = load_schema(SCHEMAS / "config.schema.yaml")
    src = sources(tmp_path, {"seed": 1}, {"raw_dri": "/x"})
    with pytest.raises(ConfigError) as err:
        check_top_level({"seed": 1, "raw_dri": "/x", "benchpress": {}}, schema, STUDIES, src)
    assert str(err.value).startswith("--config: unknown config key 'raw_dri'; did you mean 'raw_dir'? Fix:")
    src = sources(tmp_path, {"studie": ["mdad"]})
    with pytest.raises(ConfigError, match=r"mine\.yaml: unknown config key 'studie'; did you mean 'studies'\?"):
        check_top_level({"studie": ["mdad"]}, schema, STUDIES, src)
    check_top_level({"seed": 1, "mdad": {}, "include": "artifact"}, schema, STUDIES, src)  # studies' keys are known


def test_the_last_layer_that_sets_a_key_is_its_origin(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("seed: 1\nmdad: {methods: [{name: aipw}]}\n")
    b.write_text("mdad: {trials: 3}\n")
    src = ConfigSources.from_run([a], [], [b, tmp_path / "gone.yaml"], {"seed": 2})
    assert src.origin("seed") == "--config" and src.origin("mdad", "trials") == str(b)
    assert src.origin("mdad", "methods", 0, "name") == str(a) and src.origin("catalog") is None
    assert src.prefix("nope") == ""


@pytest.mark.parametrize(
    "section, expected",
    [
        (
            {"trails": 3},
            "mine.yaml: unknown config key 'misses_the_mark.trails'; did you mean 'trials'? Fix: use one of",
        ),
        ({"splits": ["interp"]}, "mine.yaml: config key 'misses_the_mark.splits[0]': 'interp' is not allowed. Fix: "),
        ({"trials": "ten"}, "config key 'misses_the_mark.trials': 'ten' is not of type integer."),
        ({"trials": 0}, "config key 'misses_the_mark.trials': 0 is less than the minimum of 1 (value 0)."),
        ({"methods": [{"nme": "aipw"}]}, "config key 'misses_the_mark.methods[0]': 'name' is missing."),
        ({"methods": [{"name": "aipw", "parms": {}}]}, "'misses_the_mark.methods[0].parms'; did you mean 'params'?"),
    ],
)
def test_a_schema_error_is_one_short_line_with_the_key_value_and_allowed_values(tmp_path, section, expected):
    """Snakemake's validate printed the whole schema (302 lines for an unknown benchpress key)."""
    src = sources(tmp_path, {"misses_the_mark": section})
    with pytest.raises(ConfigError) as err:
        validate(copy.deepcopy(section), load_schema(SCHEMAS / "misses_the_mark.schema.yaml"), "misses_the_mark", src)
    message = str(err.value)
    assert expected in message and "\n" not in message and len(message) < 500, message


def test_a_nested_value_from_the_command_line_is_read_as_typed(tmp_path):
    """`--config misses_the_mark='{"trials": 3}'` reaches the config as {'trials': '3'} (Snakemake
    reads nested values with YAML's base loader): read as the integer the user wrote. A config
    file's quoted '3' stays refused, as does a word where a number belongs."""
    schema = load_schema(SCHEMAS / "misses_the_mark.schema.yaml")
    given = {"trials": "3", "budgets": ["50", "100"]}
    section = copy.deepcopy(given)
    validate(section, schema, "misses_the_mark", sources(tmp_path, {}, {"misses_the_mark": given}))
    assert section["trials"] == 3 and section["budgets"] == [50, 100]
    with pytest.raises(ConfigError, match="'3' is not of type integer"):
        validate({"trials": "3"}, schema, "misses_the_mark", sources(tmp_path, {"misses_the_mark": {"trials": "3"}}))
    with pytest.raises(ConfigError, match=r"--config: config key 'misses_the_mark.trials': 'ten' is not of type"):
        validate(
            {"trials": "ten"}, schema, "misses_the_mark", sources(tmp_path, {}, {"misses_the_mark": {"trials": "ten"}})
        )


@pytest.mark.parametrize("study", STUDIES)
def test_defaults_are_filled_in_as_snakemake_fills_them(study):
    section = yaml.safe_load((REPO / "config" / "config.yaml").read_text()).get(study, {})
    ours, theirs = copy.deepcopy(section), copy.deepcopy(section)
    validate(ours, load_schema(SCHEMAS / f"{study}.schema.yaml"), study, ConfigSources([]))
    snakemake_validate(theirs, str(SCHEMAS / f"{study}.schema.yaml"))
    assert ours == theirs


def test_a_study_error_gets_the_file_that_set_its_key(tmp_path):
    src = sources(tmp_path, {"mdad": {"methods": [{"name": "aipw"}]}})
    err = located(ConfigError("config mdad.methods: method 'aipw': unknown parameter 'alpah'"), src)
    assert str(err).startswith(f"{tmp_path / 'mine.yaml'}: config mdad.methods: method 'aipw'")
    plain = ConfigError("IRT parameter(s) ['x'] do not apply")
    assert located(plain, src) is plain


def test_make_method_refuses_a_misspelt_parameter_with_the_closest_one():
    with pytest.raises(ConfigError) as err:
        make_method("aipw", {"alpah": 10}, where="config x.methods")
    assert str(err.value) == (
        "config x.methods: method 'aipw': unknown parameter 'alpah'; did you mean 'alpha'? "
        "Fix: use one of its parameters (alpha)"
    )
    with pytest.raises(ConfigError, match="unknown method 'aipv'; did you mean 'aipw'"):
        make_method("aipv")
    with pytest.raises(ConfigError, match="'n_similr'; did you mean 'n_similar'"):  # **settings: its param_names
        make_method("cf_probe", {"n_similr": 5})
    assert keyword_names(REGISTRY["cf_probe"]) == (*(f.name for f in dataclasses.fields(CFSettings)), "initial_max")
    with pytest.raises(ConfigError, match=r"unknown parameter 'Z'\. Fix"):  # the matrix is not a setting
        check_keywords(COMPLETERS["bias_als"].fn, {"Z": 1}, "bias_als", skip=1)


def _typo(name: str) -> str:
    return name[:-2] + name[-1] + name[-2]


def _build(study: str, section: dict, catalog) -> None:
    """What the workflow builds from a study's section when the Snakefile is parsed: the study and
    the studies it asks (build_studies; they with their own full configs)."""
    sections = {study: section}
    for other in registry()[study].guest_methods(section):
        sections[other] = yaml.safe_load((REPO / "config" / f"{other}.yaml").read_text())[other]
        validate(sections[other], load_schema(SCHEMAS / f"{other}.schema.yaml"), other, ConfigSources([]))
    build_studies([study], sections.__getitem__, catalog)


def _study_sections():
    for study in STUDIES:
        path = REPO / "config" / f"{study}.yaml"
        section = yaml.safe_load(path.read_text()).get(study) if path.is_file() else None
        if section:
            yield study, registry()[study].installed_only(section)


@pytest.mark.parametrize("study, section", list(_study_sections()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_method_of_every_study_config_has_its_parameters_checked_before_any_job(study, section, catalog):
    """A misspelt parameter of any method a study's full config lists is refused when the study is
    built (load_study, at DAG-build time), not when its job runs."""
    schema = load_schema(SCHEMAS / f"{study}.schema.yaml")
    clean = copy.deepcopy(section)
    validate(clean, schema, study, ConfigSources([]))
    _build(study, copy.deepcopy(clean), catalog)  # the config as it is: accepted
    unit = registry()[study]
    n_entries = len(unit.method_entries(copy.deepcopy(clean)))
    if n_entries == 0:
        pytest.skip(f"study {study} lists no methods (Study.method_entries)")
    checked = 0
    for i in range(n_entries):
        bad = copy.deepcopy(clean)
        entry = unit.method_entries(bad)[i]
        if not entry.accepts:
            continue
        name = max(entry.accepts, key=len)
        entry.params[_typo(name)] = 1
        with pytest.raises(ConfigError, match=f"unknown parameter '{_typo(name)}'; did you mean '{name}'"):
            _build(study, bad, catalog)
        checked += 1
    assert checked > 0


def test_a_url_template_field_the_download_rule_cannot_fill_is_refused(tmp_path):
    src = sources(tmp_path, {"url_template": "http://m/{sorce}/{path}"})
    with pytest.raises(ConfigError, match=r"mine\.yaml: config url_template: unknown field '\{sorce\}'; did you mean"):
        check_url_template("http://m/{sorce}/{path}", src)
    check_url_template("http://m/{source}/{path}?{commit}&{repository}", src)
    check_url_template(None, src)
