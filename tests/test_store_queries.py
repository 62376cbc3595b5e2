"""Queries over origins: one score per experiment with a preferred origin, counts per origin."""
from __future__ import annotations

import pandas as pd
import pytest

from encbench.store import queries


def _scores(rows):
    frame = pd.DataFrame(rows, columns=["dataset", "encoder", "cv_score", "origin", "run_id"])
    return frame.assign(model="DT", tuning="no", scoring="AUC", time=1.0)


BOTH = _scores([("3", "OH", 0.8, "published", "p"), ("3", "OH", 0.9, "local", "l1"),
                ("3", "OH", 1.0, "local", "l2"), ("3", "MT", 0.7, "published", "p"),
                ("x", "OH", 0.6, "local", "l1")])


def _score(frame, dataset, encoder):
    row = frame[(frame["dataset"] == dataset) & (frame["encoder"] == encoder)]
    assert len(row) == 1
    return row.iloc[0]


def test_the_preferred_origin_wins_where_an_experiment_has_both():
    published = queries.one_score_per_experiment(BOTH, prefer="published")
    assert len(published) == 3
    assert _score(published, "3", "OH")["cv_score"] == 0.8 and _score(published, "3", "OH")["origin"] == "published"
    local = queries.one_score_per_experiment(BOTH, prefer="local")
    assert _score(local, "3", "OH")["cv_score"] == pytest.approx(0.95)   # two local runs averaged
    assert _score(local, "3", "OH")["origin"] == "local"
    # experiments with one origin only keep it, whatever is preferred
    for frame in (published, local):
        assert _score(frame, "3", "MT")["cv_score"] == 0.7 and _score(frame, "x", "OH")["cv_score"] == 0.6


def test_without_a_preference_every_score_is_averaged_and_a_bad_one_is_named():
    mixed = queries.one_score_per_experiment(BOTH)
    assert _score(mixed, "3", "OH")["cv_score"] == pytest.approx(0.9)
    assert _score(mixed, "3", "OH")["origin"] == "local,published"
    with pytest.raises(ValueError, match="'mine'"):
        queries.one_score_per_experiment(BOTH, prefer="mine")


def test_summary_and_local_overview_count_per_origin(mem_writer):
    mem_writer.upsert_dataset({"dataset": "3", "name": "kr", "source": "openml"})
    mem_writer.ensure_run("pub", origin="published")
    mem_writer.ensure_run("loc", origin="local")
    row = dict(encoder="OH", model="DT", tuning="no", scoring="AUC", fold=-1, n_folds=1, cv_score=0.5,
               time=0.1, status="ok", error=None)
    mem_writer.write_results([{**row, "run_id": "pub", "dataset": "3"},
                              {**row, "run_id": "loc", "dataset": "3"},
                              {**row, "run_id": "loc", "dataset": "file:x"}])
    assert queries.summary(mem_writer)["results"] == 3
    published = queries.summary(mem_writer, origins=["published"])
    assert published["results"] == 1 and published["datasets"] == 1 and published["runs"] == 1
    assert queries.local_overview(mem_writer) == {"rows": 2, "datasets": 2, "runs": 1, "published_datasets": 1}
    with pytest.raises(ValueError, match="'remote'"):
        queries.summary(mem_writer, origins=["remote"])


def test_fold_spread_is_the_sample_sd_over_complete_experiments(mem_writer):
    import numpy as np

    mem_writer.ensure_run("r1", origin="local")
    rows = [dict(run_id="r1", dataset="d", encoder=e, model="DT", tuning="no", scoring="AUC", fold=k,
                 n_folds=3, cv_score=v, time=0.1, status=s, error=None)
            for e, values, s in (("OH", [0.6, 0.7, 0.95], "ok"), ("MT", [0.5, 0.6], "ok"))
            for k, v in enumerate(values)]
    mem_writer.write_results(rows)                                # MT lacks a fold: left out
    spread = queries.fold_spread(mem_writer, ["r1", "other"])
    assert spread["encoder"].tolist() == ["OH"] and spread["n_folds"].tolist() == [3]
    assert spread["cv_std"].iloc[0] == pytest.approx(np.std([0.6, 0.7, 0.95], ddof=1))
    assert queries.fold_spread(mem_writer, []).empty


def test_run_and_schema_queries_of_the_cli_and_the_placement(mem_writer):
    """The queries the command line and `encbench place` read: finished runs among a list, the
    schema's latest migration, origins and encoders present, one run's configuration, and the runs
    of an origin in creation order (oldest or newest first)."""
    from encbench.store.db import migration_files

    mem_writer.ensure_run("a", origin="local", config={"tuning": "no"}, label="first")
    mem_writer.ensure_run("b", origin="local")
    mem_writer.ensure_run("p", origin="published")
    mem_writer.set_run_status("a", "done")
    mem_writer.set_run_status("p", "done")
    mem_writer.write_results([dict(run_id="b", dataset="d", encoder="OH", model="DT", tuning="no",
                                   scoring="AUC", fold=0, n_folds=1, cv_score=0.5, time=0.1,
                                   status="ok", error=None)])
    assert queries.runs_done(mem_writer, ["a", "b", "nope"]) == ["a"]
    assert queries.runs_done(mem_writer, []) == []
    assert queries.schema_version(mem_writer) == max(v for v, _ in migration_files())
    assert queries.run_origins(mem_writer) == ["local", "published"]
    assert queries.encoders_with_scores(mem_writer) == ["OH"]
    (one,) = queries.run_config(mem_writer, "a").itertuples(index=False)
    assert (one.run_id, one.status, one.label, one.config) == ("a", "done", "first", '{"tuning": "no"}')
    assert queries.run_config(mem_writer, "x' OR 1=1 --").empty          # a value, never SQL
    assert queries.runs_of_origin(mem_writer, "local")["run_id"].tolist() == ["a", "b"]
    assert queries.runs_of_origin(mem_writer, "local", newest_first=True)["run_id"].tolist() == ["b", "a"]
    with pytest.raises(ValueError, match="'remote'"):
        queries.runs_of_origin(mem_writer, "remote")


def test_summary_counts_the_runs_its_results_come_from(mem_writer):
    """The Overview's "Runs" counts runs with scores in the view's origins, as its banner's "from N
    run(s)" does: a failed or empty run of the same origin adds nothing."""
    mem_writer.upsert_dataset({"dataset": "3", "name": "kr", "source": "openml"})
    for run in ("loc-1", "loc-empty", "loc-failed"):
        mem_writer.ensure_run(run, origin="local")
    mem_writer.write_results([dict(run_id="loc-1", dataset="3", encoder="OH", model="DT", tuning="no",
                                   scoring="AUC", fold=-1, n_folds=1, cv_score=0.5, time=0.1, status="ok"),
                              dict(run_id="loc-failed", dataset="3", encoder="MT", model="DT", tuning="no",
                                   scoring="AUC", fold=-1, n_folds=1, status="failed", error="boom")])
    assert queries.summary(mem_writer, origins=["local"])["runs"] == 1
    assert queries.local_overview(mem_writer)["runs"] == 1
