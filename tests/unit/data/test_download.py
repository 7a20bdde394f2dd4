"""The download rule's fetcher, exercised offline with file:// URLs."""

import hashlib

import pytest
from helpers import REPO

from benchcast.data.catalog import load_catalog
from benchcast.data.download import download, find_file
from benchcast.errors import DataError
from benchcast.studies.misses_the_mark.analysis import DATASET_ORDER

CATALOG = REPO / "src" / "benchcast" / "data" / "catalog.yaml"


def test_download_verifies_checksum_and_writes_atomically(tmp_path):
    src = tmp_path / "remote.bin"
    src.write_bytes(b"benchcast" * 1000)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    dest = tmp_path / "out" / "file.bin"
    assert download(src.as_uri(), dest, digest, log=lambda m: None) == digest
    assert dest.read_bytes() == src.read_bytes()


def test_download_checksum_mismatch_leaves_nothing(tmp_path):
    src = tmp_path / "remote.bin"
    src.write_bytes(b"tampered")
    dest = tmp_path / "out" / "file.bin"
    with pytest.raises(DataError, match="checksum mismatch"):
        download(src.as_uri(), dest, "0" * 64, log=lambda m: None)
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_download_without_known_checksum_records_it(tmp_path):
    src = tmp_path / "remote.bin"
    src.write_bytes(b"new file")
    seen = []
    got = download(src.as_uri(), tmp_path / "f.bin", None, log=seen.append)
    assert got == hashlib.sha256(b"new file").hexdigest() and any("no known checksum" in m for m in seen)


def test_catalog_urls_point_at_the_pinned_commit():
    cat = load_catalog(CATALOG)
    spec, role = find_file(cat, "benchmark-prediction", "data/scores/musr.jbl")
    assert spec.name == "musr" and role == "scores"
    assert spec.url(role, cat.url_template) == (
        "https://raw.githubusercontent.com/socialfoundations/benchmark-prediction/"
        "2e98c82ea45bed58f54c9e8894ca42e776bf32a9/data/scores/musr.jbl"
    )
    meta = cat["musr"].files["metadata"]
    assert meta.source == "sloth" and "felipemaiapolo/sloth" in cat["musr"].url("metadata", cat.url_template)
    with pytest.raises(DataError):
        find_file(cat, "benchmark-prediction", "data/scores/nope.jbl")
    # every dataset of the paper is catalogued, mirrored or not
    for name in DATASET_ORDER:  # the paper's 19 datasets, in its order
        assert cat[name].kind == "item_binary"


def _catalog_with_file(tmp_path, content: bytes, pinned: bytes | None):
    import yaml

    mirror = tmp_path / "mirror" / "src" / "data"
    mirror.mkdir(parents=True)
    (mirror / "x.jbl").write_bytes(content)
    doc = {
        "sources": {"src": {"repository": "o/r", "commit": "c" * 40}},
        "url_template": "https://example.invalid/{repository}/{commit}/{path}",
        "datasets": {
            "x": {
                "title": "X",
                "suite": "s",
                "kind": "item_binary",
                "source": "src",
                "format": "jbl",
                "files": {
                    "scores": {"path": "data/x.jbl", "sha256": hashlib.sha256(pinned).hexdigest() if pinned else None}
                },
            }
        },
    }
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(doc))
    return load_catalog(tmp_path / "catalog.yaml"), tmp_path / "mirror"


def test_verify_checksums_refuses_an_edited_mirror_file(tmp_path):
    from benchcast.data.raw_files import verify_checksums

    cat, mirror = _catalog_with_file(tmp_path, b"edited", pinned=b"original")
    with pytest.raises(DataError, match="checksum mismatch") as err:
        verify_checksums(cat["x"], mirror, log=lambda m: None)
    assert err.value.field == "sha256" and "datasets.x.files.scores.sha256" in err.value.fix
    cat, mirror = _catalog_with_file(tmp_path / "ok", b"original", pinned=b"original")
    assert verify_checksums(cat["x"], mirror, log=lambda m: None) == [mirror / "src/data/x.jbl"]
    seen = []
    cat, mirror = _catalog_with_file(tmp_path / "unpinned", b"anything", pinned=None)
    assert verify_checksums(cat["x"], mirror, log=seen.append) == [] and "no pinned sha256" in seen[0]


def test_raw_dir_checks_name_the_key_and_the_layout(tmp_path):
    from benchcast.data.raw_files import check_raw_dir, download_targets, mirror_file
    from benchcast.errors import ConfigError

    with pytest.raises(ConfigError, match="config raw_dir: folder .* does not exist.*resources/raw"):
        check_raw_dir(tmp_path / "nowhere")
    check_raw_dir("resources/raw")  # download mode: the folder is made by the downloads
    cat, mirror = _catalog_with_file(tmp_path, b"x", pinned=None)
    assert mirror_file(cat["x"], "scores", mirror) == mirror / "src/data/x.jbl"
    (mirror / "src/data/x.jbl").unlink()
    with pytest.raises(ConfigError, match=r"has no file .*x\.jbl \(dataset 'x', files.scores\)"):
        mirror_file(cat["x"], "scores", mirror)
    assert download_targets(cat) == (["src"], ["data/x.jbl"])


def test_url_template_may_name_the_mirror_folder():
    cat = load_catalog(CATALOG)
    assert cat["musr"].url("scores", "http://127.0.0.1:8000/{source}/{path}") == (
        "http://127.0.0.1:8000/benchmark-prediction/data/scores/musr.jbl"
    )


@pytest.mark.parametrize("where", ["missing_file", "refused_port", "no_scheme"])
def test_an_unreachable_url_is_one_error_naming_the_url_the_file_and_both_fixes(tmp_path, where):
    """Offline download mode ended in two chained tracebacks ("unexpected URLError"), no URL, no fix."""
    url = {
        "missing_file": (tmp_path / "nowhere" / "x.jbl").as_uri(),
        "refused_port": "http://127.0.0.1:9/benchmark-prediction/data/scores/x.jbl",  # the discard port: closed
        "no_scheme": "mirror.internal/x.jbl",
    }[where]
    dest = tmp_path / "resources" / "raw" / "src" / "x.jbl"
    with pytest.raises(DataError) as err:
        download(url, dest, None, log=lambda m: None, timeout=5)
    message = str(err.value)
    assert f"could not download {url}" in message and str(dest) in message and "\n" not in message
    assert "raw_dir" in message and "url_template" in message
    assert err.value.__cause__ is None and err.value.__suppress_context__
    assert list(dest.parent.iterdir()) == []  # nothing half-written
