"""AppTest: local scores on a published dataset that disagree with its published scores are
said so on the run result (Run and Runs pages), in the Results explorer and wherever *both*
mixes them in (the measure: :func:`encbench.views.run_result.published_agreement`).

The database holds the small database's published results (tests/small_db.py) plus one local
run, DT/no/AUC with six encoders, on vote (56, each local score 0.2 above the published one, as
the study's shifted labels make it) and on credit-g (31, each local score the published one).
"""
from __future__ import annotations

import pytest
from pagetest import new_app, open_page, texts
from small_db import copy_db

from encbench.store import Reader, Writer, queries

RUN = "local-agreement00001"
ENCODERS = ("OH", "MT", "Ord", "Count", "Sum", "Bin")


@pytest.fixture(scope="module")
def vote_path(small_published_db, tmp_path_factory):
    """The database, written once: its tests only read it."""
    path = copy_db(small_published_db, tmp_path_factory.mktemp("vote") / "db" / "encbench.duckdb")
    reader = Reader(path)
    try:
        published = queries.load_scores(reader, datasets=["56", "31"], encoders=list(ENCODERS), models=["DT"],
                                        tunings=["no"], scorings=["AUC"], origins=["published"])
    finally:
        reader.close()
    assert len(published) == 12
    with Writer(path) as writer:
        writer.ensure_run(RUN, origin="local", label="vote and credit-g", status="done", n_expected=12,
                          config={"datasets": ["56", "31"], "encoders": list(ENCODERS), "models": ["DT"],
                                  "scorings": ["AUC"], "tuning": "no", "n_folds": 1})
        writer.write_results([
            dict(run_id=RUN, dataset=r.dataset, encoder=r.encoder, model="DT", tuning="no", scoring="AUC",
                 fold=0, n_folds=1, cv_score=r.cv_score + (0.2 if r.dataset == "56" else 0.0), time=0.1,
                 status="ok", error=None)
            for r in published.itertuples()])
    return path


@pytest.fixture()
def vote_db(vote_path, monkeypatch):
    monkeypatch.setenv("ENCBENCH_DB", str(vote_path))
    monkeypatch.setenv("ENCBENCH_WORKER_IDLE_EXIT", "1")
    return vote_path


def _agreement_alerts(at) -> tuple[list[str], list[str]]:
    warnings = [w.value for w in at.warning if "disagree" in w.value]
    captions = [c.value for c in at.caption if c.value.startswith("Published dataset:")]
    return warnings, captions


def test_the_run_result_warns_on_the_dataset_whose_scores_disagree(vote_db):
    at = open_page("runs", {"run": RUN})
    warnings, captions = _agreement_alerts(at)
    assert len(warnings) == 1
    assert warnings[0].startswith("Your scores on vote disagree with the published ones: 0 of 6 experiments (0%)")
    assert "6 of the 6 cells off are published cells known not to be reproducible" in warnings[0]
    assert "shifted by one row" in warnings[0]
    assert captions == ["Published dataset: 6 of 6 experiments (100%) are within 0.005 of their published score."]


def test_the_run_page_shows_the_same_warning_under_its_last_run(vote_db):
    at = new_app(60)
    at.session_state["last_run"] = RUN
    at.switch_page("pages/run.py")
    at.run()
    at.radio(key="source").set_value("Bundled dataset").run()     # the page stops without a dataset
    assert not at.exception, at.exception
    warnings, captions = _agreement_alerts(at)
    assert len(warnings) == 1 and "Your scores on vote disagree" in warnings[0] and len(captions) == 1


def test_the_explorer_warns_in_published_vs_local_and_when_both_mixes_them_in(vote_db):
    at = open_page("explorer", {"model": "DT"})
    assert [w for w in at.warning if "Your scores on vote disagree" in w.value]
    assert not [w for w in at.warning if "credit-g disagree" in w.value]
    both = open_page("explorer", {"model": "DT", "origin": "both", "prefer": "local"})
    banner = [w.value for w in both.warning if w.value.startswith("Local scores on vote disagree")]
    assert banner == ["Local scores on vote disagree with its published scores (0 of 6 experiments within "
                      "0.005; docs/protocol.md, 'Differences from the published study'): 6 of this view's scores on "
                      "vote come from those local runs, each replacing the published score of the same "
                      "experiment."]
    kept = open_page("explorer", {"model": "DT", "origin": "both"})          # prefer published
    assert "none of them enters this view" in texts(kept)
    assert not [w for w in open_page("explorer", {"model": "LogReg", "origin": "both"}).warning
                if "disagree" in w.value]                                   # no local LogReg score
