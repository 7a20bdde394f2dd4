"""The dataset catalog: what each dataset is and where its files live. The catalog the workflow and
the command line read by default, :data:`DEFAULT_CATALOG` (``catalog.yaml`` beside this module), is
package data: an installed benchcast carries it. A config's ``catalog`` key names another."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchcast.errors import ConfigError

#: ``files.<role>.source: repo`` marks a file kept with the catalog in its repository (e.g. a
#: table transcribed from a paper), at ``path`` relative to the catalog's ``repo_root``, instead
#: of a raw file at ``<raw_dir>/<source>/<path>``. It is versioned with the catalog, so it has
#: no URL, commit or checksum.
REPO_SOURCE = "repo"
#: Where every raw file is public: the source repository at its pinned commit. The workflow's
#: ``url_template`` config key may point downloads at another server; ``{source}`` (the
#: catalog's source name, the mirror's top folder) is also available there.
PUBLIC_URL_TEMPLATE = "https://raw.githubusercontent.com/{repository}/{commit}/{path}"


#: the catalog shipped with benchcast (package data)
DEFAULT_CATALOG = Path(__file__).with_name("catalog.yaml")


def shipped_catalog() -> str:
    """:data:`DEFAULT_CATALOG` relative to the working folder where it can be (a clone's workflow
    runs see ``src/benchcast/data/catalog.yaml``, as a config would name it), else absolute."""
    try:
        return os.path.relpath(DEFAULT_CATALOG)
    except ValueError:  # another drive (Windows)
        return str(DEFAULT_CATALOG)


@dataclass(frozen=True)
class RawFile:
    role: str  # "scores", "models", "source", "target", ...
    path: str  # path inside the source repository (and inside <raw_dir>/<source>/)
    sha256: str | None  # None: not known (file not in the offline mirror)
    format: str | None = None
    source: str = ""  # source (repository) of this file; defaults to the dataset's; "repo": the catalog's
    repository: str = ""
    commit: str = ""

    @property
    def in_repo(self) -> bool:
        """True for a file kept with the catalog (``source: repo``), not in the raw mirror."""
        return self.source == REPO_SOURCE


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    title: str
    suite: str
    kind: str  # item_binary | aggregate
    source: str
    format: str
    files: dict[str, RawFile]
    repository: str
    commit: str
    n_models: int | None = None
    n_items: int | None = None
    mirrored: bool = True
    duplicate_model_names: str = "error"
    min_accuracy: float = 1e-8
    subtasks: tuple[tuple[str, int], ...] = ()
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def local_path(
        self, raw_dir: str | Path | Mapping[str, str | Path], role: str, repo_dir: str | Path | None = None
    ) -> Path:
        """Where a file of this dataset lives.

        A raw file is at ``<raw_dir>/<source>/<path>`` (a mirror laid out like
        ``../shared/raw``); a ``source: repo`` file is at ``<repo_dir>/<path>``, where
        ``repo_dir`` is the catalog's :attr:`Catalog.repo_root` (:meth:`Catalog.local_path`).
        ``raw_dir`` may instead map each role to its file (a workflow rule's inputs, which the
        rule already resolved): the file is then taken from there.
        """
        f = self.files[role]
        if isinstance(raw_dir, Mapping):
            if role not in raw_dir:
                raise ConfigError(f"dataset '{self.name}': no file given for files.{role}. Fix: pass every role's file")
            return Path(raw_dir[role])
        if f.in_repo:
            if repo_dir is None:
                raise ConfigError(
                    f"dataset '{self.name}' file '{role}' ({f.path}) is kept with the catalog (source: repo). "
                    "Fix: look it up with the catalog's repo_root (Catalog.local_path, or pass repo_dir)"
                )
            return Path(repo_dir) / f.path
        return Path(raw_dir) / f.source / f.path

    def url(self, role: str, template: str) -> str:
        f = self.files[role]
        if f.in_repo:
            raise ConfigError(
                f"dataset '{self.name}' file '{role}' ({f.path}) is kept in this repository "
                "(source: repo) and has no download URL"
            )
        return template.format(repository=f.repository, commit=f.commit, path=f.path, source=f.source)


@dataclass(frozen=True)
class Catalog:
    datasets: dict[str, DatasetSpec]
    url_template: str
    path: str
    repo_root: Path  # where `source: repo` paths start: the catalog's `repo_root` key, relative to the catalog file

    def local_path(self, name: str, role: str, raw_dir: str | Path) -> Path:
        """Where file ``role`` of dataset ``name`` lives (:meth:`DatasetSpec.local_path`)."""
        return self[name].local_path(raw_dir, role, self.repo_root)

    def __getitem__(self, name: str) -> DatasetSpec:
        try:
            return self.datasets[name]
        except KeyError:
            known = ", ".join(sorted(self.datasets))
            raise ConfigError(
                f"unknown dataset '{name}' (catalog {self.path}). Known datasets: {known}. "
                "Fix: use one of these names, or add an entry to the catalog."
            ) from None

    def names(self, kind: str | None = None) -> list[str]:
        return [n for n, d in self.datasets.items() if kind is None or d.kind == kind]


def load_catalog(path: str | Path) -> Catalog:
    """Read a catalog file. Its ``repo_root`` key (default ``.``) is resolved relative to the
    file's folder, so a catalog and the files it keeps (``source: repo``) move together."""
    path = Path(path)
    with open(path) as fh:
        raw = yaml.safe_load(fh)
    repo_root = (path.parent / str(raw.get("repo_root", "."))).resolve()
    sources = raw["sources"]
    if REPO_SOURCE in sources:
        raise ConfigError(
            f"{path}: sources.{REPO_SOURCE} is reserved for files kept in this repository. Fix: rename that source"
        )
    datasets: dict[str, DatasetSpec] = {}
    for name, d in raw["datasets"].items():
        if d["source"] not in sources and d["source"] != REPO_SOURCE:
            raise ConfigError(f"{path}: dataset '{name}' names unknown source '{d['source']}'")
        src = sources.get(d["source"], {"repository": "", "commit": ""})  # repo: kept with the catalog
        files = {}
        for role, f in d["files"].items():
            fsrc = f.get("source", d["source"])
            if fsrc == REPO_SOURCE:
                rel = Path(f["path"])
                if rel.is_absolute() or ".." in rel.parts:
                    raise ConfigError(
                        f"{path}: dataset '{name}' file '{role}' has source '{REPO_SOURCE}' but path "
                        f"'{f['path']}' is not inside the catalog's repo_root ({repo_root}). Fix: give a path "
                        "relative to repo_root, without '..'"
                    )
                files[role] = RawFile(
                    role=role, path=f["path"], sha256=f.get("sha256"), format=f.get("format"), source=fsrc
                )
                continue
            if fsrc not in sources:
                raise ConfigError(
                    f"{path}: dataset '{name}' file '{role}' names unknown source '{fsrc}' "
                    f"(known: {', '.join(sorted(sources))}, or '{REPO_SOURCE}' for a repository file)"
                )
            files[role] = RawFile(
                role=role,
                path=f["path"],
                sha256=f.get("sha256"),
                format=f.get("format"),
                source=fsrc,
                repository=sources[fsrc]["repository"],
                commit=sources[fsrc]["commit"],
            )
        known = {
            "title",
            "suite",
            "kind",
            "source",
            "format",
            "files",
            "n_models",
            "n_items",
            "mirrored",
            "duplicate_model_names",
            "min_accuracy",
            "subtasks",
            "note",
        }
        for key, allowed in (("kind", ("item_binary", "aggregate")), ("duplicate_model_names", ("error", "suffix"))):
            if d.get(key, allowed[0]) not in allowed:
                raise ConfigError(f"{path}: datasets.{name}.{key} is '{d[key]}'. Fix: use one of {', '.join(allowed)}")
        datasets[name] = DatasetSpec(
            name=name,
            title=d["title"],
            suite=d["suite"],
            kind=d["kind"],
            source=d["source"],
            format=d["format"],
            files=files,
            repository=src["repository"],
            commit=src["commit"],
            n_models=d.get("n_models"),
            n_items=d.get("n_items"),
            mirrored=bool(d.get("mirrored", True)),
            duplicate_model_names=d.get("duplicate_model_names", "error"),
            min_accuracy=float(d.get("min_accuracy", 1e-8)),
            subtasks=tuple((s["name"], int(s["size"])) for s in d.get("subtasks", []) or []),
            note=d.get("note", ""),
            extra={k: v for k, v in d.items() if k not in known},
        )
    return Catalog(datasets=datasets, url_template=raw["url_template"], path=str(path), repo_root=repo_root)
