"""The IRT validation (our MIRT-2PL fit against py-irt's) under the study contract."""

from __future__ import annotations

from benchcast.studies.contract import Study

TABLES = "results/tables/irt_validation"


class IRTValidation(Study):
    name = "irt_validation"
    title = "Our multidimensional 2PL IRT fit against py-irt's, on held-out cells"
    position = 30
    # py-irt lives in a venv of its own (scripts/dev/setup_pyirt_env.sh): not part of the artifact run,
    # and its full run is the default config with studies=[irt_validation]
    artifact = False
    config_file = None

    def datasets(self) -> list[str]:
        return list(self.config["datasets"])

    def outputs(self) -> list[str]:
        return [f"{TABLES}/fits.csv", f"{TABLES}/comparison.csv", f"{TABLES}/summary.md"]


STUDY = IRTValidation
