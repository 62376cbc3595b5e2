"""The `python -m encbench` commands that read or manage the database."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from encbench.cli import main
from encbench.store import Writer

REPO = Path(__file__).resolve().parents[1]


def _run(row_run_id: str, **kw) -> dict:
    row = dict(run_id=row_run_id, dataset="31", encoder="OH", model="DT", tuning="no", scoring="AUC",
               fold=0, n_folds=1, cv_score=0.5, time=0.1, status="ok", error=None)
    row.update(kw)
    return row


def test_read_commands_refuse_a_missing_database_without_creating_it(tmp_path, capsys):
    typo = tmp_path / "typo.duckdb"
    assert main(["db", "info", "--db", str(typo)]) == 2
    assert main(["runs", "--db", str(typo)]) == 2
    assert "no database at" in capsys.readouterr().err
    assert not typo.exists()


def test_db_info_reads_the_snapshot_while_a_writer_holds_the_database(private_db, capsys):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from encbench.store import Writer; "
         "w = Writer(sys.argv[1]); w.publish(); print('held', flush=True); time.sleep(60)", str(private_db)],
        env=dict(os.environ, PYTHONPATH=str(REPO)), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["db", "info", "--db", str(private_db)]) == 0
    finally:
        holder.kill()
        holder.wait()
    out = capsys.readouterr().out
    assert "results: 61812" in out and "published-matteucci2023" in out


def test_runs_errors_and_delete(private_db, capsys):
    with Writer(private_db) as writer:
        writer.ensure_run("local-x", origin="local", status="done")
        writer.write_results([_run("local-x"), _run("local-x", encoder="MT", status="failed", cv_score=None,
                                                    error="encoder MT: boom")])
    assert main(["runs", "--errors", "nosuch", "--db", str(private_db)]) == 2
    assert "unknown run: got 'nosuch'" in capsys.readouterr().err
    assert main(["runs", "--errors", "local-x", "--db", str(private_db)]) == 0
    assert "encoder MT: boom" in capsys.readouterr().out
    assert main(["runs", "--delete", "local-x", "--db", str(private_db)]) == 0
    assert "deleted run local-x: 2 result rows" in capsys.readouterr().out
    assert main(["runs", "--delete", "local-x", "--db", str(private_db)]) == 2
    with Writer(private_db, publish=False) as writer:
        assert writer.query("SELECT count(*) AS n FROM results WHERE run_id = 'local-x'")["n"].iloc[0] == 0
        assert writer.query("SELECT count(*) AS n FROM results")["n"].iloc[0] == 61812


def test_db_init_brings_an_older_database_up_to_the_latest_migration(tmp_path, capsys):
    import shutil

    import duckdb

    from encbench.store import Reader, publish_snapshot
    from encbench.store.db import MIGRATIONS_DIR, apply_migrations, migration_files
    from encbench.store.importer import shipped_runs

    old_migrations = tmp_path / "migrations"
    old_migrations.mkdir()
    shutil.copy(MIGRATIONS_DIR / "001_core.sql", old_migrations)
    # an old database: schema 001 only, no published rows yet, and a snapshot of it
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    apply_migrations(con, old_migrations)
    con.close()
    fd = os.open(path, os.O_RDONLY)
    try:
        con = duckdb.connect(str(path))
        publish_snapshot(con, path, fd)
        con.close()
    finally:
        os.close(fd)
    with Reader(path) as reader:
        assert reader.query("SELECT max(version) AS v FROM schema_migrations")["v"].iloc[0] == 1
    assert main(["db", "init", "--db", str(path)]) == 0
    latest = max(v for v, _ in migration_files())
    with Reader(path) as reader:
        assert reader.query("SELECT max(version) AS v FROM schema_migrations")["v"].iloc[0] == latest
        assert reader.query("SELECT count(*) AS n FROM scores WHERE origin = 'published'")["n"].iloc[0] == 61812
        # encbench's own results, each file the checkout ships as one finished run
        assert reader.query("SELECT status FROM runs WHERE origin = 'encbench'")["status"].tolist() == [
            "done"] * len(shipped_runs())
        assert "heartbeat_at" in reader.query("SELECT * FROM runs LIMIT 0").columns
    assert main(["db", "init", "--db", str(path)]) == 0     # now a no-op that needs no lock
    assert "up to date" in capsys.readouterr().out


def _recommend_table(path: Path) -> Path:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    n = 300
    frame = pd.DataFrame({"city": rng.choice([f"c{i}" for i in range(40)], n), "kind": rng.choice(["a", "b"], n),
                          "x": rng.normal(size=n), "label": rng.choice(["no", "no", "yes"], n)})
    frame.to_csv(path, index=False)
    return path


def test_recommend_prints_the_advisors_verdict_for_one_setting(tmp_path, capsys):
    from encbench import advisor as recommend
    from encbench import metafeatures

    path = _recommend_table(tmp_path / "mine.csv")
    assert main(["recommend", f"{path}:label", "--model", "SVM", "--metric", "F1", "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    features = metafeatures.from_frame(__import__("pandas").read_csv(path), "label")
    expected = recommend.recommend(features, recommend.reference_scores("binary"), model="SVM", scoring="F1", B=50)
    assert f"mine: {features.n_rows} rows, 2 categorical and 1 numerical columns, binary target" in out
    assert f"the {expected.k} most similar reference datasets:" in out
    assert expected.neighbours["name"].iloc[0] in out
    assert f"recommended: {', '.join(expected.recommended)}" in out
    assert expected.message in out


def test_recommend_without_a_setting_lists_every_model_and_metric(tmp_path, capsys):
    path = _recommend_table(tmp_path / "mine.csv")
    assert main(["recommend", f"{path}:label", "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    from encbench.advisor import choose_policy, validation_summary

    from encbench.advisor import reference_scores

    lines = out.split("recommendation per model and metric")[1].split("\n\n")[0].splitlines()[2:]
    scores = reference_scores("binary")
    settings = scores.loc[scores["tuning"] == "no", ["model", "scoring"]].drop_duplicates()
    assert len(lines) == len(settings) >= 20  # at least the study's five models x four metrics
    shipped = validation_summary(task="binary").set_index(["model", "tuning", "scoring"])
    for line in lines:
        model, metric = line.split()[:2]
        key = (model, "no", metric)
        policy = choose_policy(shipped.loc[key].to_dict() if key in shipped.index else None)
        assert ("similar datasets " in line) == (policy == "neighbours"), line
        assert ("global consensus" in line) == (policy == "global"), line
        assert ("always OH" in line) == (policy == "OH"), line
    assert "nearest reference datasets: " in out


def _task_table(path: Path, task: str) -> Path:
    """A small seeded table in no suite: a categorical column of 30 levels, one of 3, a number, and
    a multiclass (iris' species) or a regression (a skewed price) target."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(17)
    n = 240
    frame = pd.DataFrame({"shop": rng.choice([f"s{i}" for i in range(30)], n), "size": rng.choice(["S", "M", "L"], n),
                          "x": rng.normal(size=n)})
    if task == "multiclass":
        frame["species"] = rng.choice(["setosa", "versicolor", "virginica"], n)
    else:
        frame["price"] = np.round(np.exp(rng.normal(3, 1, n)), 2)
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("task,target,model,metric", [("multiclass", "species", "LogReg", "AUC"),
                                                      ("regression", "price", "Ridge", "RMSE")])
def test_recommend_advises_on_a_multiclass_and_a_regression_file(tmp_path, capsys, task, target, model, metric):
    """A multiclass or a regression file in no suite gets advice from the reference datasets of its
    task: every setting of the task's reference scores, and one setting in detail, as the library
    advises it."""
    import pandas as pd

    from encbench import advisor as recommend
    from encbench import metafeatures

    path = _task_table(tmp_path / f"{task}.csv", task)
    assert main(["recommend", f"{path}:{target}", "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert f"{task} target" in out and recommend.reference_label(task) in out
    scores = recommend.reference_scores(task)
    lines = out.split("recommendation per model and metric")[1].split("\n\n")[0].splitlines()[2:]
    assert len(lines) == len(scores.loc[scores["tuning"] == "no", ["model", "scoring"]].drop_duplicates()) > 0
    assert main(["recommend", f"{path}:{target}", "--model", model, "--metric", metric, "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    features = metafeatures.from_frame(pd.read_csv(path), target)
    assert features.task == task
    expected = recommend.recommend(features, scores, model=model, scoring=metric, B=20)
    assert f"recommended: {', '.join(expected.recommended)}" in out
    assert expected.message in out and f"({task} target)" in expected.message
    if expected.n_reference < recommend.MIN_VALIDATED:  # the suites' results are still few: says so
        assert expected.use == "global"


def test_recommend_names_the_users_classes_and_refuses_a_model_of_another_task(tmp_path, capsys):
    """A three-class target read as binary is refused naming its classes, not their codes; a model
    that does not serve the task is refused naming those that do."""
    path = _task_table(tmp_path / "multi.csv", "multiclass")
    assert main(["recommend", f"{path}:species", "--task", "binary"]) == 2
    err = capsys.readouterr().err
    assert "'setosa'" in err and "'versicolor'" in err and "'virginica'" in err and "[0, 1, 2]" not in err
    reg = _task_table(tmp_path / "reg.csv", "regression")
    assert main(["recommend", f"{reg}:price", "--model", "LogReg"]) == 2
    assert "--model LogReg: no no-tuning reference scores for a regression target; use one of" in \
        capsys.readouterr().err


def test_recommend_refuses_a_file_without_target(tmp_path, capsys):
    path = _recommend_table(tmp_path / "mine.csv")
    assert main(["recommend", str(path)]) == 2
    assert "name the target column" in capsys.readouterr().err
    assert main(["recommend", f"{path}:nope"]) == 2
    assert "target column 'nope' not in file 'mine.csv'" in capsys.readouterr().err


def test_private_files_makes_what_follows_owner_only_under_any_umask(tmp_path):
    """`run` and `worker` call it first: what they create (DuckDB's write-ahead log included,
    which DuckDB makes afresh with the umask at every checkpoint) is owner-only whatever the
    user's umask, and the bits the user's umask takes away stay away."""
    # one process imports the command line once; a fresh child per umask calls private_files
    code = ("import os, sys; from encbench.cli import private_files\n"
            "for umask in sys.argv[1:]:\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        os.chdir(umask); os.umask(int(umask, 8)); private_files(); open('made', 'w').close(); "
            "os.mkdir('dir')\n"
            "        print(umask, oct(os.stat('made').st_mode & 0o777), oct(os.stat('dir').st_mode & 0o777), "
            "oct(os.umask(0)), flush=True)\n"
            "        os._exit(0)\n"
            "    assert os.waitpid(pid, 0)[1] == 0, umask\n")
    expected = {"022": "0o600 0o700 0o77", "027": "0o600 0o700 0o77", "277": "0o400 0o500 0o277"}
    for umask in expected:
        (tmp_path / umask).mkdir()
    done = subprocess.run([sys.executable, "-c", code, *expected], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    seen = {line.split(maxsplit=1)[0]: line.split(maxsplit=1)[1] for line in done.stdout.splitlines()}
    assert seen == expected


def test_the_encoders_command_lists_the_encoders_beyond_the_study(capsys):
    """`encbench encoders` lists the 11 encoders that `--encoders beyond` runs, each marked with the
    registry's family "beyond the study" and its description, after the study's 32 and before
    the plugins."""
    from encbench.encoders import BEYOND_REGISTRY, REGISTRY

    assert main(["encoders"]) == 0
    out = capsys.readouterr().out
    head, _, beyond = out.partition("encoders beyond the study")
    assert beyond, out
    assert "11 " in head.splitlines()[-1] and "--encoders beyond" in beyond.splitlines()[0]
    lines = {line.split()[0]: line for line in beyond.splitlines()[1:] if line.startswith("  ")}
    assert list(lines) == list(BEYOND_REGISTRY) and len(lines) == 11
    for name, spec in BEYOND_REGISTRY.items():
        assert "beyond the study" in lines[name] and spec.description in lines[name]
        assert f"  {name} " not in head                          # not among the study's 32
    assert all(f"  {name:<11} {spec.family}" in head for name, spec in REGISTRY.items())


def test_place_alpha_is_checked_by_the_registry_constraint(capsys):
    """`encbench place --alpha` takes the registry's default, help and check: a value outside
    (0, 1) stops the command before any database is read, naming the parameter and the value."""
    from encbench import vocab

    with pytest.raises(SystemExit) as stopped:
        main(["place", "run-x", "--alpha", "2", "--db", "/nonexistent/encbench.duckdb"])
    assert stopped.value.code == 2
    assert "argument --alpha: alpha must be a number in (0, 1): got '2'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["place", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"{vocab.ALPHA.help} A number in (0, 1); default {vocab.ALPHA.default:g}" in help_text
