"""AppTest: the encoders beyond the study enter a view only when chosen, ranked among the 32 on
the datasets encbench's own runs cover, with a banner that says so.

On the small database's published results (tests/small_db.py) with encbench's own scores of
:data:`OURS`; the last test on the small database itself (its shipped run and its local run)."""
from __future__ import annotations

import pytest
from pagetest import open_page, texts
from small_db import copy_db

from encbench.store import ENCBENCH_RUN_ID, Writer

# encbench's own scores (LogReg / no / AUC) on two published datasets: SkTE best on both
OURS = {("50", "SkTE"): 0.999, ("50", "OH"): 0.80, ("31", "SkTE"): 0.95, ("31", "OH"): 0.70}


@pytest.fixture(scope="module")
def beyond_path(small_published_db, tmp_path_factory):
    """The database, written once: its tests only read it."""
    path = copy_db(small_published_db, tmp_path_factory.mktemp("beyond") / "beyond.duckdb")
    with Writer(path) as writer:
        writer.ensure_run(ENCBENCH_RUN_ID, origin="encbench", label="beyond", status="done", n_expected=4)
        writer.write_results([
            dict(run_id=ENCBENCH_RUN_ID, dataset=d, encoder=e, model="LogReg", tuning="no", scoring="AUC",
                 fold=0, n_folds=1, cv_score=v, time=0.1, status="ok", error=None)
            for (d, e), v in OURS.items()])
    return path


@pytest.fixture()
def beyond_db(beyond_path, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(beyond_path))
    return beyond_path


def _rankings(at):
    return at.dataframe[0].value


def test_off_by_default_the_view_is_the_published_one(beyond_db):
    at = open_page("consensus", {"model": "LogReg", "tuning": "no", "metric": "AUC"})
    assert at.checkbox(key="beyond").value is False
    ranking = _rankings(at)
    assert "SkTE" not in set(ranking["encoder"]) and len(ranking) == 32
    assert "beyond the study are added" not in texts(at)


def test_chosen_they_rank_among_the_32_on_the_datasets_they_cover(beyond_db):
    at = open_page("consensus", {"model": "LogReg", "tuning": "no", "metric": "AUC", "beyond": "true"})
    assert at.checkbox(key="beyond").value is True
    ranking = _rankings(at)
    assert "SkTE" in set(ranking["encoder"]) and len(ranking) == 33
    banner = texts(at)
    assert "Encoders beyond the study are added (1: SkTE)" in banner
    assert "on the 2 dataset(s) they cover" in banner
    # the controls' agreement with the published cells is said
    assert "Their controls agree with the published cells" in banner


def test_their_family_is_the_registry_s_in_tables_and_exports(beyond_db):
    """An encoder beyond the study is labelled with its registry family ("beyond the study"),
    never "(not in registry)", in the Consensus table (the frame its exports write)."""
    at = open_page("consensus", {"model": "LogReg", "tuning": "no", "metric": "AUC", "beyond": "true"})
    ranking = _rankings(at)
    assert ranking.set_index("encoder").loc["SkTE", "family"] == "beyond the study"
    assert "(not in registry)" not in set(ranking["family"])


def test_the_explorer_adds_them_with_their_family(beyond_db):
    """The Results explorer's beyond toggle adds the encoders beyond the study: its banner names
    them (not "added (0: )"), its rows hold them under their registry family, and its count of
    encoders includes them."""
    at = open_page("explorer", {"model": "LogReg", "tuning": "no", "metric": "AUC", "beyond": "true"})
    shown = texts(at)
    assert "Encoders beyond the study are added (1: SkTE)" in shown
    assert "added (0: )" not in shown
    rows = at.dataframe[0].value
    assert set(rows.loc[rows["encoder"] == "SkTE", "family"]) == {"beyond the study"}
    assert "33 encoders" in shown
    off = open_page("explorer", {"model": "LogReg", "tuning": "no", "metric": "AUC"})
    assert "32 encoders" in texts(off) and "SkTE" not in set(off.dataframe[0].value["encoder"])


def test_the_overview_ranks_over_shared_voters_and_lists_those_left_out(beyond_db):
    """With the encoders beyond the study added, the Overview's headline ranks the 32 over the
    voters they all share and lists SkTE (2 voters here) apart with its own voters, never ranking
    it by a mean over other voters than the 32's."""
    at = open_page("overview", {"beyond": "true"})
    best = next(m.value for m in at.markdown if m.value.startswith("Best overall"))
    assert "left out as they have results on too few voters: SkTE (2 voters)" in best
    headline, left_out = at.dataframe[0].value, at.dataframe[1].value
    assert "SkTE" not in set(headline["encoder"]) and headline["n_voters"].nunique() == 1
    assert left_out["encoder"].tolist() == ["SkTE"] and left_out["family"].tolist() == ["beyond the study"]


def test_with_local_runs_left_out_the_view_does_not_claim_the_published_benchmark_only(small_db, monkeypatch):
    """With local runs in the database and the encoders beyond the study added, the caption said
    "Published benchmark only" while encbench's own rows were in the view. (The small database
    holds both: encbench's shipped run and a local run.)"""
    monkeypatch.setenv("ENCBENCH_DB", str(small_db))
    query = {"model": "LogReg", "tuning": "no", "metric": "AUC"}
    added = texts(open_page("consensus", {**query, "beyond": "true"}))
    assert "Published benchmark only" not in added
    assert "The published benchmark and encbench's own results for the encoders beyond the study." in added
    assert "Published benchmark only." in texts(open_page("consensus", query))
