"""The workflow's config, checked when the Snakefile is parsed (before any job, also under ``-n``).

Each mistake ends in one line naming the key, what is wrong and, where the key came from is known,
the file (or ``--config``) that set it:

* a top-level key that is neither a shared key (``workflow/schemas/config.schema.yaml``) nor a study
  (:func:`benchcast.studies.registry`): ``unknown config key 'raw_dri'; did you mean 'raw_dir'?``;
* a study's section against its schema (``workflow/schemas/<study>.schema.yaml``), defaults filled in
  as :func:`snakemake.utils.validate` fills them, an error shortened to the failing key, its value and
  the allowed values (an unknown key with the closest known one) instead of the schema's dump; a
  value ``--config`` gave as text is read as typed where its schema says so (:func:`_typed`).

Methods' parameters are checked by the studies themselves (their ``Jobs``, through
:func:`benchcast.methods.make_method`), when ``load_study`` builds them.

A missing ``--configfile`` cannot be caught here: Snakemake reads it before the Snakefile, and ends in
its own traceback whose last line names the file (docs/configuration.md).
"""

from __future__ import annotations

import copy
import reprlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from benchcast.errors import ConfigError, did_you_mean

#: keys a config file may hold besides the schema's and the studies': ``include`` (read by
#: :func:`benchcast.workflow.support.resolve_includes`)
EXTRA_TOP_LEVEL = ("include",)

_short = reprlib.Repr()
_short.maxstring, _short.maxother, _short.maxlist, _short.maxdict, _short.maxlevel = 60, 60, 6, 6, 2


class ConfigSources:
    """Where each config key came from: the layers Snakemake merges, later winning.

    ``layers`` is ``[(label, mapping), ...]`` in merge order: the Snakefile's ``configfile:``, the
    files ``include:`` names, each ``--configfile``, then ``--config``.
    """

    def __init__(self, layers: Iterable[tuple[str, Mapping]]):
        self.layers = [(label, data) for label, data in layers if isinstance(data, Mapping)]

    @classmethod
    def from_run(
        cls,
        default_files: Iterable[str | Path],
        included: Iterable[str | Path],
        configfiles: Iterable[str | Path],
        command_line: Mapping,
    ) -> ConfigSources:
        """The layers of one run: file paths (read here; an unreadable one is skipped) and the
        ``--config`` mapping."""
        layers = [(str(p), _read(p)) for p in [*default_files, *included, *configfiles]]
        return cls([*layers, ("--config", command_line)])

    def origin(self, *keys: str | int) -> str | None:
        """The label of the last layer that sets ``keys`` (a path into the config), or None."""
        found = None
        for label, data in self.layers:
            node = data
            for key in keys:
                if isinstance(node, Mapping) and key in node:
                    node = node[key]
                elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
                    node = node[key]
                else:
                    break
            else:
                found = label
        return found

    def prefix(self, *keys: str | int) -> str:
        """``"<file>: "`` (or ``"--config: "``) for a message about ``keys``, or ``""`` if unknown."""
        origin = self.origin(*keys)
        return f"{origin}: " if origin else ""


def _read(path: str | Path) -> Mapping:
    try:
        return yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError):
        return {}


def load_schema(path: str | Path) -> dict:
    return yaml.safe_load(Path(path).read_text())


def check_top_level(config: Mapping, schema: Mapping, studies: Iterable[str], sources: ConfigSources) -> None:
    """Refuse a top-level key that is neither a shared key of ``schema`` nor a study's name."""
    known = [*schema.get("properties", {}), *studies, *EXTRA_TOP_LEVEL]
    for key in config:
        if key not in known:
            raise ConfigError(
                f"{sources.prefix(key)}unknown config key '{key}'{did_you_mean(key, known) or '.'} "
                f"Fix: use one of {', '.join(sorted(known))} (a study's name is the key of its settings)"
            )


def validate(data: dict, schema: Mapping, key: str | None, sources: ConfigSources) -> None:
    """Validate ``data`` (the whole config, ``key`` None, or its section ``key``) against ``schema`` in
    place, filling in the schema's defaults; the first error as one :class:`ConfigError` line."""
    import jsonschema

    base = jsonschema.validators.validator_for(schema)
    validator = jsonschema.validators.extend(base, {"properties": _properties_with_defaults(base)})(schema)
    for _ in range(1_000):  # each pass types at least one value or stops
        errors = list(validator.iter_errors(data))
        if not any([_typed(data, error, key, sources, validator) for error in errors]):
            break
    error = jsonschema.exceptions.best_match(iter(errors))
    if error is not None:
        path = ([key] if key else []) + list(error.absolute_path)
        raise ConfigError(sources.prefix(*path) + describe(error, path))


def _typed(data, error, key: str | None, sources: ConfigSources, validator) -> bool:
    """Read a value ``--config`` set as text the way its schema types it: Snakemake reads a nested
    value (``--config misses_the_mark='{"trials": 3}'``) with YAML's base loader, which makes every
    scalar a string. The value is replaced, as YAML reads it, when that has the schema's type; a
    config file's values are left as written."""
    if error.validator != "type" or not isinstance(error.instance, str) or not error.absolute_path:
        return False
    path = ([key] if key else []) + list(error.absolute_path)
    if sources.origin(*path) != "--config":
        return False
    try:
        value = yaml.safe_load(error.instance)
    except yaml.YAMLError:
        return False
    wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    if isinstance(value, str) or not any(validator.is_type(value, t) for t in wanted):
        return False
    *parents, last = error.absolute_path
    node = data
    for part in parents:
        node = node[part]
    node[last] = value
    return True


def _properties_with_defaults(base):
    """jsonschema's ``properties`` check that first fills each missing property's default (the
    recipe of jsonschema's FAQ, as :func:`snakemake.utils.validate` uses it)."""
    check = base.VALIDATORS["properties"]

    def properties(validator, props, instance, schema):
        if isinstance(instance, dict):
            for name, sub in props.items():
                if "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from check(validator, props, instance, schema)

    return properties


def dotted(path: list) -> str:
    """``['mdad', 'methods', 2, 'params']`` -> ``mdad.methods[2].params``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def describe(error, path: list) -> str:
    """One line for a jsonschema error: the failing key, its value and what is allowed."""
    where, value, rule = dotted(path) or "the config", error.instance, error.validator_value
    if error.validator == "additionalProperties" and rule is False and isinstance(value, Mapping):
        allowed = list(error.schema.get("properties", {}))
        extra = next(k for k in value if k not in allowed)
        name = dotted([*path, extra])
        return (
            f"unknown config key '{name}'{did_you_mean(extra, allowed) or '.'} "
            f"Fix: use one of the keys of {where}: {', '.join(allowed) or 'none'}"
        )
    if error.validator == "enum":
        allowed = ", ".join(str(v) for v in rule)
        return f"config key '{where}': {_short.repr(value)} is not allowed. Fix: use one of {allowed}"
    if error.validator == "type":
        types = " or ".join(rule) if isinstance(rule, list) else rule
        return f"config key '{where}': {_short.repr(value)} is not of type {types}. Fix: give a value of type {types}"
    if error.validator == "required":
        missing = next((k for k in rule if isinstance(value, Mapping) and k not in value), rule[0])
        return f"config key '{where}': '{missing}' is missing. Fix: add {dotted([*path, missing])}"
    problem = error.message if len(error.message) <= 200 else error.message[:200] + "..."
    return f"config key '{where}': {problem} (value {_short.repr(value)}). Fix: see its description in the schema"


def located(error: ConfigError, sources: ConfigSources) -> ConfigError:
    """``error`` with the file (or ``--config``) that set its key in front, when its message starts
    with ``config <key>`` (``config misses_the_mark.methods: ...``) and the key's origin is known."""
    message = str(error)
    head = message.split(":", 1)[0]
    if not head.startswith("config ") or " " in head[len("config ") :]:
        return error
    keys = head[len("config ") :].split(".")
    while keys and sources.origin(*keys) is None:
        keys.pop()
    return ConfigError(sources.prefix(*keys) + message) if keys else error


#: the fields of ``url_template`` (:meth:`benchcast.data.catalog.DatasetSpec.url`)
URL_FIELDS = ("repository", "commit", "path", "source")


def check_url_template(template: str | None, sources: ConfigSources) -> None:
    """Refuse a ``url_template`` field the download rule cannot fill (it would fail in every job)."""
    import string

    if template is None:
        return
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ConfigError(f"{sources.prefix('url_template')}config url_template: {exc}. Fix: see its fields") from None
    for field in fields:
        if field not in URL_FIELDS:
            raise ConfigError(
                f"{sources.prefix('url_template')}config url_template: unknown field '{{{field}}}'"
                f"{did_you_mean(field, URL_FIELDS) or '.'} Fix: use {', '.join('{' + f + '}' for f in URL_FIELDS)}"
            )
