"""The method comparison under the study contract: it asks each protocol study to run its methods
(:meth:`~benchcast.studies.contract.Study.guest_methods`), then ranks them from those studies' own
result files -- a built-in method a study already runs, as that study configures it, is not run
again."""

from __future__ import annotations

from benchcast.errors import ConfigError
from benchcast.studies.contract import GuestMethod, MethodEntry, Study, installed_entries, registry_entries

TABLES = "results/tables/method_comparison"
FIGURES = "results/figures/method_comparison"
SCORES = "results/metrics/method_comparison/{protocol}.parquet"
WHERE = "config method_comparison.methods"


class MethodComparison(Study):
    name = "method_comparison"
    title = "Every method under every protocol: a ranking per protocol and budget"
    position = 80
    # not a paper: what a researcher runs for a new method; config/method_comparison.yaml is its full run
    artifact = False

    @classmethod
    def installed_only(cls, config) -> dict:
        return {**config, "methods": installed_entries(config["methods"])}

    @classmethod
    def method_entries(cls, config) -> list[MethodEntry]:
        return registry_entries(config["methods"])

    @classmethod
    def guest_methods(cls, config) -> dict[str, list[GuestMethod]]:
        from benchcast.methods import make_method
        from benchcast.studies import registry

        studies = registry()
        for protocol in config["protocols"]:
            if protocol not in studies or studies[protocol].protocol_score is None:
                offering = [n for n, c in studies.items() if c.protocol_score is not None]
                raise ConfigError(
                    f"config method_comparison.protocols: '{protocol}' is not a study that offers its protocol. "
                    f"Fix: use some of {', '.join(offering)}"
                )
        asked: dict[str, list[GuestMethod]] = {p: [] for p in config["protocols"]}
        labels = set()
        for entry in config["methods"]:
            label = entry.get("label", entry["name"])
            if label in labels:
                raise ConfigError(f"{WHERE}: '{label}' is listed twice. Fix: give one a label of its own")
            labels.add(label)
            make_method(entry["name"], entry.get("params"), where=f"{WHERE}: '{label}'")  # name and settings, first
            for protocol in entry.get("protocols") or config["protocols"]:
                if protocol not in asked:
                    raise ConfigError(
                        f"{WHERE}: '{label}' names protocol '{protocol}', which method_comparison.protocols does "
                        "not list. Fix: add it there"
                    )
                asked[protocol].append(GuestMethod(label, entry["name"], entry.get("params"), WHERE))
        return asked

    def __init__(self, config, catalog, guests=(), others=None):
        super().__init__(config, catalog, guests, others)
        missing = [p for p in config["protocols"] if p not in self.others]
        if missing:
            raise ConfigError(f"study method_comparison: the protocol studies {missing} are not loaded")

    def methods(self, protocol: str) -> list[str]:
        """The labels this run compares under ``protocol``, in config order."""
        return [
            e.get("label", e["name"])
            for e in self.config["methods"]
            if protocol in (e.get("protocols") or self.config["protocols"])
        ]

    def runs(self, protocol: str) -> list[dict]:
        """Every result file the comparison reads under ``protocol``: ``{"method", "budget",
        "group", "path"}``, each the protocol study's own file."""
        study = self.others[protocol]
        return [{"method": label, **run} for label in self.methods(protocol) for run in study.protocol_runs(label)]

    def datasets(self) -> list[str]:
        return list(dict.fromkeys(d for p in self.config["protocols"] for d in self.others[p].datasets()))

    def tables(self) -> dict[str, str]:
        names = [*self.config["protocols"], "summary"]
        return {name: f"{TABLES}/{name}.csv" for name in names}

    def outputs(self) -> list[str]:
        return [
            *self.tables().values(),
            *(path.replace(".csv", ".md") for path in self.tables().values()),
            f"{FIGURES}/ranks.png",
        ]

    def scope(self) -> str:
        cfg = self.config
        return (
            f"{len(cfg['methods'])} methods under {len(cfg['protocols'])} protocols "
            f"({', '.join(cfg['protocols'])}), each on its study's grid in this run's config"
        )


STUDY = MethodComparison
