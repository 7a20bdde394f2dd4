"""Download mode and mirror verification, end to end on the real mirrored dumps.

A copy of ``../shared/raw`` is served over HTTP on 127.0.0.1 and the default config's datasets
are downloaded (``raw_dir: resources/raw``, ``url_template`` pointing at the server) and ingested;
a file corrupted on the server, and a file edited in a mirror, are refused with one line that
names the file, the field (sha256) and the fix, in the console and in the rule's log.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from helpers import MIRROR, REPO

from benchcast.data.catalog import load_catalog

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not MIRROR.is_dir(), reason=f"no mirror of the raw dumps at {MIRROR}"),
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def http_mirror(tmp_path):
    """A copy of the mirror served on 127.0.0.1; yields (folder, url prefix)."""
    served = tmp_path / "served"
    shutil.copytree(MIRROR, served)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=served))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def default_config_workdir(root: Path, **overrides) -> tuple[Path, dict]:
    """A work folder with the repository's default config (and catalog), some keys overridden."""
    (root / "config").mkdir(parents=True)
    # the copied catalog's `source: repo` files (the BenchPress inventory) stay the repository's
    catalog = yaml.safe_load((REPO / "src" / "benchcast" / "data" / "catalog.yaml").read_text())
    (root / "config" / "catalog.yaml").write_text(yaml.safe_dump({**catalog, "repo_root": str(REPO)}, sort_keys=False))
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(catalog="config/catalog.yaml", **overrides)
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return root, config


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--cores",
        "2",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)


def needed_files(config: dict) -> dict[str, str]:
    """Relative mirror path -> pinned sha256 (or None) of every raw file of the config's datasets."""
    catalog = load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml")
    datasets = list(config["misses_the_mark"]["datasets"]) + [config.get("benchpress", {}).get("dataset", "benchpress")]
    return {f"{f.source}/{f.path}": f.sha256 for d in datasets for f in catalog[d].files.values() if not f.in_repo}


def test_download_mode_fetches_verifies_and_refuses_a_corrupted_file(tmp_path, http_mirror):
    served, url = http_mirror
    # the default config's first two studies (the tour's other three read five more datasets)
    work, config = default_config_workdir(
        tmp_path / "work",
        raw_dir="resources/raw",
        url_template=url + "/{source}/{path}",
        studies=["misses_the_mark", "benchpress"],
    )
    proc = snakemake(work, "data", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = needed_files(config)
    assert len(files) >= 5 and any("/" in rel.split("/", 1)[1] for rel in files)  # files in subfolders too
    downloaded = {
        p.relative_to(work / "resources/raw").as_posix() for p in (work / "resources/raw").rglob("*") if p.is_file()
    }
    assert downloaded == set(files)
    for rel, sha in files.items():
        got = hashlib.sha256((work / "resources/raw" / rel).read_bytes()).hexdigest()
        assert got == hashlib.sha256((MIRROR / rel).read_bytes()).hexdigest()
        if sha is not None:
            assert got == sha
            assert sha in (work / "logs/download" / f"{rel}.log").read_text()
    for dataset in (*config["misses_the_mark"]["datasets"], "benchpress"):
        assert "sha256 verified" in (work / "logs/ingest" / f"{dataset}.log").read_text()

    # a file corrupted on the server: refused, named, no partial file left behind
    rel = "benchmark-prediction/data/scores/mrpc.jbl"
    blob = bytearray((served / rel).read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    (served / rel).write_bytes(bytes(blob))
    (work / "resources/raw" / rel).unlink()
    shutil.rmtree(work / "results/data/mrpc")
    proc = snakemake(work, "data", "--quiet")
    assert proc.returncode != 0
    console = [ln for ln in proc.stderr.splitlines() if "checksum mismatch" in ln]
    assert len(console) == 1 and "sha256" in console[0] and "Fix:" in console[0] and "mrpc.jbl" in console[0]
    assert "checksum mismatch" in (work / "logs/download" / f"{rel}.log").read_text()
    assert list((work / "resources/raw" / rel).parent.glob("*mrpc.jbl*")) == []


def test_a_tampered_mirror_file_is_refused(tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(MIRROR / "benchpress", mirror / "benchpress")
    data = mirror / "benchpress" / "website" / "data.json"
    data.write_text(data.read_text().replace('"name"', '"name" ', 1))  # still valid JSON
    work, _ = default_config_workdir(tmp_path / "work", raw_dir=str(mirror), studies=["benchpress"])
    proc = snakemake(work, "data", "--quiet")
    assert proc.returncode != 0
    console = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR in rule ingest_aggregate_dataset")]
    assert len(console) == 1
    for part in (str(data), "field 'sha256'", "checksum mismatch", "Fix: restore the file"):
        assert part in console[0]
    assert "checksum mismatch" in (work / "logs/ingest/benchpress.log").read_text()
    assert not (work / "results/data/benchpress/scores.parquet").exists()


def test_a_missing_raw_dir_or_mirror_file_stops_before_any_job(tmp_path):
    work, _ = default_config_workdir(tmp_path / "work", raw_dir=str(tmp_path / "nowhere"))
    proc = snakemake(work, "-n")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "config raw_dir: folder" in out and "does not exist" in out and "resources/raw" in out
    partial = tmp_path / "partial"
    shutil.copytree(MIRROR / "benchmark-prediction", partial / "benchmark-prediction")
    (partial / "benchmark-prediction/data/scores/mrpc.jbl").unlink()
    work, _ = default_config_workdir(tmp_path / "work2", raw_dir=str(partial), studies=["misses_the_mark"])
    proc = snakemake(work, "-n")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "has no file" in out and "mrpc.jbl" in out and "files.scores" in out
