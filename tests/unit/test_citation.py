"""CITATION.cff: a Citation File Format 1.2.0 file whose version is the package's, citing each paper
the workflow reproduces."""

from __future__ import annotations

import tomllib

import yaml
from helpers import REPO

from benchcast import __version__


def test_citation_file_names_this_version_and_every_reproduced_paper():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert {"message", "title", "authors", "version"} <= set(cff)
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert cff["version"] == version == __version__
    titles = {ref["title"].lower() for ref in cff["references"]}
    for paper in (
        "misses the mark",
        "run every eval",
        "tailored benchmarks",
        "micro-benchmarking",
        "collaborative filtering",
    ):
        assert any(paper in t for t in titles), paper
    for ref in cff["references"]:
        assert ref["authors"] and ref["type"] == "article"
