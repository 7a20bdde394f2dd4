"""Fetch a raw file from its public URL and verify its checksum (the only network access)."""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.request
from pathlib import Path

from benchcast.data.catalog import Catalog
from benchcast.data.io import disk_full
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


#: what a failed fetch raises: an unreachable host or file (URLError, an OSError), a refused or
#: broken connection, a timeout, an HTTP error status (HTTPError), a truncated or garbled reply
#: (HTTPException), a URL without a known scheme (ValueError)
FETCH_ERRORS = (OSError, http.client.HTTPException, ValueError)


#: the two ways to get a file the network does not give, in the workflow's words
WORKFLOW_FIX = (
    "point raw_dir at a folder that already holds the raw files (a mirror laid out like ../shared/raw: "
    "--config raw_dir=/path/to/mirror), or set url_template to a copy you can reach "
    "(--config url_template='https://host/path/{source}/{path}')"
)


def fetch_error(url: str, dest: Path, exc: BaseException, fix: str = WORKFLOW_FIX) -> DataError:
    """The one line a failed fetch ends in: the URL, the file it was for, and the two ways to get it."""
    reason = getattr(exc, "reason", None) or exc
    return DataError(
        dest, "url", f"could not download {url} ({type(exc).__name__}: {' '.join(str(reason).split())})", fix
    )


def download(
    url: str, dest: str | Path, sha256: str | None, log=print, timeout: float = 120.0, fix: str = WORKFLOW_FIX
) -> str:
    """Download ``url`` to ``dest`` atomically; verify ``sha256`` when known. Returns the digest.

    Nothing is left at ``dest`` unless the whole file arrived and matched: it is written to a
    temporary file beside it, removed on any failure. A failed fetch is a :class:`DataError`
    naming the URL, the file and ``fix``: the ways to get it instead (:func:`fetch_error`)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    digest = hashlib.sha256()
    needed = None  # the file's size, once the server says it
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                resp = urllib.request.urlopen(url, timeout=timeout)
            except FETCH_ERRORS as exc:
                raise fetch_error(url, dest, exc, fix) from None
            with resp:
                length = resp.headers.get("Content-Length")
                needed = int(length) if length and length.isdigit() else None
                while True:
                    try:
                        chunk = resp.read(1 << 20)
                    except FETCH_ERRORS as exc:
                        raise fetch_error(url, dest, exc, fix) from None
                    if not chunk:
                        break
                    digest.update(chunk)
                    out.write(chunk)  # a full disk is not the network's fault: its own error
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
    except BaseException as exc:
        full = disk_full(exc, dest, tmp, needed)
        Path(tmp).unlink(missing_ok=True)
        if full is not None:
            raise full from None
        raise
