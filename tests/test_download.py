"""The download rule's fetcher, exercised offline with file:// URLs."""

import hashlib

import pytest

from benchcast.data.catalog import load_catalog
from benchcast.data.download import download, find_file
from benchcast.errors import DataError


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
    cat = load_catalog()
    spec, role = find_file(cat, "benchmark-prediction", "data/scores/musr.jbl")
    assert spec.name == "musr" and role == "scores"
    assert spec.url(role, cat.url_template) == ("https://raw.githubusercontent.com/socialfoundations/benchmark-prediction/"
                                                "2e98c82ea45bed58f54c9e8894ca42e776bf32a9/data/scores/musr.jbl")
    meta = cat["musr"].files["metadata"]
    assert meta.source == "sloth" and "felipemaiapolo/sloth" in cat["musr"].url("metadata", cat.url_template)
    with pytest.raises(DataError):
        find_file(cat, "benchmark-prediction", "data/scores/nope.jbl")
    # every dataset of the paper is catalogued, mirrored or not
    for name in ["commonsense", "gsm", "legalbench", "math", "med_qa", "mmlu", "mrpc", "rte", "sst2", "mnli", "qnli",
                 "ifeval", "openllm_math", "mmlu_pro", "arc_challenge", "bbh", "gpqa", "musr", "imagenet"]:
        assert cat[name].kind == "item_binary"
