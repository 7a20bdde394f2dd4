"""Fetch a raw file from its public URL and verify its checksum (the only network access)."""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from pathlib import Path

from benchcast.data.catalog import Catalog
from benchcast.errors import DataError


def find_file(catalog: Catalog, source: str, path: str):
    """The (dataset spec, role) that declares ``<source>/<path>``."""
    for spec in catalog.datasets.values():
        for role, f in spec.files.items():
            if spec.source == source and f.path == path:
                return spec, role
    raise DataError(
        catalog.path,
        f"{source}/{path}",
        "no catalog entry declares this file",
        "add it to a dataset's files in the catalog",
    )


def download(url: str, dest: str | Path, sha256: str | None, log=print, timeout: float = 120.0) -> str:
    """Download ``url`` to ``dest`` atomically; verify ``sha256`` when known. Returns the digest."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            while chunk := resp.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        got = digest.hexdigest()
        if sha256 is not None and got != sha256:
            raise DataError(
                url,
                "sha256",
                f"checksum mismatch: expected {sha256}, got {got}",
                "the upstream file changed or the download was corrupted; retry, or update the catalog "
                "after checking the new file",
            )
        if sha256 is None:
            log(f"WARNING: no known checksum for {url}; downloaded file has sha256 {got} (record it in the catalog)")
        os.replace(tmp, dest)
        log(f"downloaded {url} -> {dest} (sha256 {got})")
        return got
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
