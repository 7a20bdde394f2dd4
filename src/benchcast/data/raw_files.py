"""Where the raw dumps come from (a mirror or downloads) and whether they are the pinned bytes.

Two modes, chosen by the ``raw_dir`` config key:

* **mirror**: ``raw_dir`` is a folder laid out as ``<raw_dir>/<source>/<path in the source
  repository>`` (``../shared/raw``, or a copy of it);
* **download**: ``raw_dir: resources/raw``; the workflow's ``download_raw`` rule fetches each
  file from ``url_template`` (config; default the catalog's public URL) into that folder.

In both modes the ingest jobs hash every raw file the catalog pins a ``sha256`` for before
reading it, so an edited or truncated mirror file is refused. Ingest jobs run once per
dataset (and again only when a raw file changes), so each file is hashed once per ingest,
not on every run; the dumps are a few MB each.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from benchcast.data.catalog import PUBLIC_URL_TEMPLATE, Catalog, DatasetSpec
from benchcast.errors import ConfigError, DataError

#: ``raw_dir`` value that switches the workflow to downloading the files.
DOWNLOAD_DIR = "resources/raw"
#: One file of the mirror layout, for error messages.
LAYOUT_EXAMPLE = "<raw_dir>/benchmark-prediction/data/scores/commonsense.jbl"


def is_download_mode(raw_dir: str | Path) -> bool:
    return Path(raw_dir) == Path(DOWNLOAD_DIR)


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def check_raw_dir(raw_dir: str | Path) -> None:
    """Refuse, at the start of a run, a mirror folder that does not exist."""
    if is_download_mode(raw_dir) or Path(raw_dir).is_dir():
        return
    raise ConfigError(
        f"config raw_dir: folder '{raw_dir}' does not exist (resolved: {Path(raw_dir).resolve()}). "
        f"Fix: point raw_dir at a mirror laid out as <source>/<path in the source repository> "
        f"(e.g. {LAYOUT_EXAMPLE}; ../shared/raw is one), or set raw_dir: {DOWNLOAD_DIR} to download the files"
    )


def mirror_file(spec: DatasetSpec, role: str, raw_dir: str | Path, repo_dir: str | Path | None = None) -> Path:
    """The local path of one file of ``spec``; in mirror mode, refuse a file the mirror lacks."""
    path = spec.local_path(raw_dir, role, repo_dir=repo_dir)
    if spec.files[role].in_repo or is_download_mode(raw_dir) or path.exists():
        return path
    raise ConfigError(
        f"config raw_dir: the mirror '{raw_dir}' has no file {path} (dataset '{spec.name}', files.{role}). "
        f"Fix: point raw_dir at a mirror that has it (layout {LAYOUT_EXAMPLE}), set raw_dir: {DOWNLOAD_DIR} "
        f"to download it, or leave '{spec.name}' out of the config"
    )


def verify_checksums(spec: DatasetSpec, raw_dir: str | Path, log=print) -> list[Path]:
    """Hash every raw file of ``spec`` that the catalog pins a sha256 for; raise on a mismatch.

    Returns the files verified. Files kept in this repository (``source: repo``) are versioned
    with the code and have no checksum; files with ``sha256: null`` are reported, not checked.
    """
    verified = []
    for role, f in spec.files.items():
        if f.in_repo:
            continue
        path = spec.local_path(raw_dir, role)
        if f.sha256 is None:
            log(f"{spec.name}: files.{role} ({path}) has no pinned sha256 in the catalog; not verified")
            continue
        got = sha256_of(path)
        if got != f.sha256:
            raise DataError(
                path,
                "sha256",
                f"checksum mismatch for dataset '{spec.name}' files.{role}: the catalog pins {f.sha256}, the file has {got}",
                f"restore the file from its source ({spec.url(role, PUBLIC_URL_TEMPLATE)}) or download it "
                f"(raw_dir: {DOWNLOAD_DIR}); if the source changed on purpose, update datasets.{spec.name}.files."
                f"{role}.sha256 in the catalog after checking the new file",
            )
        verified.append(path)
    if verified:
        log(f"{spec.name}: sha256 verified for {len(verified)} raw file(s)")
    return verified


def download_targets(catalog: Catalog) -> tuple[list[str], list[str]]:
    """The catalog's raw-file sources and paths: the only values the download rule's wildcards take."""
    sources, paths = set(), set()
    for spec in catalog.datasets.values():
        for f in spec.files.values():
            if not f.in_repo:
                sources.add(f.source)
                paths.add(f.path)
    return sorted(sources), sorted(paths)
