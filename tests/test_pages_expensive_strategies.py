"""AppTest: the pages treat a strategy by what the strategy registry declares (expensive, run in a
worker process), never by its name: a strategy newly marked so in the registry is treated as
R-Kem is, with no page edited."""
from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
from pagetest import open_page, texts

from encbench import vocab


@pytest.fixture(autouse=True)
def published_env(published_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(published_db))


@pytest.fixture()
def expensive_elo(monkeypatch):
    """The registry with Elo declared expensive and run in a worker process (key ``elo``)."""
    elo = dataclasses.replace(vocab.STRATEGY_REGISTRY["Elo"], cost="Bradley-Terry fit", worker="elo")
    monkeypatch.setattr(vocab, "STRATEGY_REGISTRY", MappingProxyType({**vocab.STRATEGY_REGISTRY, "Elo": elo}))


def test_replicability_runs_a_strategy_the_registry_marks_for_a_worker_there(expensive_elo):
    """Replicability computes a worker strategy in a worker process with progress and a Cancel
    button named by its registry key, the others in the page; its line joins when done."""
    at = open_page("replicability", {"strategy": ["R-M", "Elo"], "n_pairs": "10", "step": "10"})
    assert set(at.dataframe[0].value["strategy"]) == {"R-M"}     # Elo is not computed in the page
    assert at.button(key="elo-cancel").label == "Cancel Elo"
    assert "one Bradley-Terry fit each" in " ".join(p.text for p in at.get("progress"))
    job = next(iter(at.session_state["replicability_elo"].values()))
    assert job.wait(120) and job.error is None
    at.run()
    summary = at.dataframe[0].value
    assert set(summary["strategy"]) == {"R-M", "Elo"}
    assert summary.loc[summary["strategy"] == "Elo", "sample_size"].tolist() == [10, 20, 25]
    at.multiselect(key="strategy").set_value(["R-M"]).run()     # left out: nothing runs for it
    assert not at.exception and set(at.dataframe[0].value["strategy"]) == {"R-M"}


def test_consensus_leaves_an_expensive_strategy_out_of_the_intervals(expensive_elo):
    """Rank intervals offer no strategy the registry marks expensive, and say why in the words
    of its declared cost."""
    at = open_page("consensus", {"strategy": ["R-M", "Elo"], "section": "Rank intervals"})
    assert at.selectbox(key="istrategy").options == ["R-M"]
    assert "Elo has no bootstrap interval here: it would need one Bradley-Terry fit per resample." in texts(at)
    assert "Elo (one Bradley-Terry fit each) is left out" in at.selectbox(key="istrategy").help
