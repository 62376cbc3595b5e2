"""Bring your own encoder: specs, plugins, the pre-run check, suites, and end to end
from the command line (a frequency-rank encoder of tests/byo_encoders.py on bundled datasets)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from encbench import custom, suites
from encbench.custom import CustomEncoder, load_params, parse_encoders
from encbench.encoders import checked as checked_encoder
from encbench.engine.custom_check import check_encoder
from encbench.engine.grid import Grid

REPO = Path(__file__).resolve().parents[1]
FREQ = "tests.byo_encoders:FrequencyRankEncoder"


def _sample(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.choice(list("abcde"), n), "b": rng.choice(["x", "y", None], n)})
    y = rng.integers(0, 2, n)
    return X, y


# -- parsing -----------------------------------------------------------------------------------
def test_parse_canonical_import_path_named_and_params():
    canonical, customs = parse_encoders(f"mt,OH,{FREQ},Scaled=tests.byo_encoders:make_frequency_rank",
                                        {"FrequencyRankEncoder": {"scale": True}})
    assert canonical == ("OH", "MT")
    assert [c.name for c in customs] == ["FrequencyRankEncoder", "Scaled"]
    assert customs[0].params == {"scale": True} and customs[1].params == {}
    assert customs[1].build().scale is True  # a factory


@pytest.mark.parametrize("text, message", [
    ("OH=tests.byo_encoders:FrequencyRankEncoder", "collides with the study's encoder 'OH'"),
    ("cvmt_5=tests.byo_encoders:FrequencyRankEncoder", "collides with the study's encoder 'CVMT_5'"),
    ("NoSuchThing", "unknown encoder: got 'NoSuchThing'"),
    ("X=tests.byo_encoders:FrequencyRankEncoder,x=tests.byo_encoders:NaNEncoder", "two custom encoders"),
    ("bad name=tests.byo_encoders:FrequencyRankEncoder", "custom encoder name"),
])
def test_parse_errors_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        parse_encoders(text)


def test_params_for_an_encoder_not_given_is_an_error():
    with pytest.raises(ValueError, match="not in --encoders"):
        parse_encoders(FREQ, {"Other": {"a": 1}})


def test_import_errors_are_clear():
    spec = CustomEncoder("Nope", "no_such_module_xyz:Enc")
    with pytest.raises(ValueError, match="cannot import module 'no_such_module_xyz'"):
        spec.build()
    with pytest.raises(ValueError, match="has no attribute 'Missing'"):
        CustomEncoder("Nope", "tests.byo_encoders:Missing").build()
    with pytest.raises(ValueError, match="cannot build encoder"):
        CustomEncoder("Bad", FREQ, {"no_such_param": 1}).build()


def test_load_params_json_text_json_file_and_toml(tmp_path):
    assert load_params('{"A": {"x": 1}}') == {"A": {"x": 1}}
    (tmp_path / "p.json").write_text(json.dumps({"A": {"x": 2}}))
    assert load_params(str(tmp_path / "p.json")) == {"A": {"x": 2}}
    (tmp_path / "p.toml").write_text('[FrequencyRankEncoder]\nscale = true\nunknown_value = -1.0\n')
    assert load_params(str(tmp_path / "p.toml")) == {"FrequencyRankEncoder": {"scale": True, "unknown_value": -1.0}}
    with pytest.raises(ValueError, match="not valid JSON"):
        load_params("{oops")
    with pytest.raises(ValueError, match="neither a JSON object nor a file"):
        load_params("missing.toml")
    with pytest.raises(ValueError, match="table of parameters"):
        load_params('{"A": 3}')


# -- the check ---------------------------------------------------------------------------------
def test_check_passes_a_sound_encoder():
    X, y = _sample()
    report = check_encoder(parse_encoders(FREQ)[1][0], X, y)
    assert report.ok, report.problems
    assert (report.n_columns_in, report.n_columns_out) == (2, 2)


@pytest.mark.parametrize("target, message", [
    ("tests.byo_encoders:LeakyEncoder", "leaks the target"),
    ("tests.byo_encoders:NaNEncoder", "NaN or infinite"),
    ("tests.test_custom_encoders:NeedsY", "transform requires the target y"),
    ("tests.test_custom_encoders:WrongRows", "rows for"),
    ("tests.test_custom_encoders:Broken", "fit on .* raised RuntimeError: broken"),
    ("tests.test_custom_encoders:NotAnEncoder", "without fit and transform"),
])
def test_check_names_what_is_wrong(target, message):
    X, y = _sample()
    report = check_encoder(CustomEncoder("Mine", target), X, y)
    assert not report.ok
    assert any(__import__("re").search(message, p) for p in report.problems), report.problems


class NeedsY:
    def fit(self, X, y):
        return self

    def transform(self, X, y):
        return X


class WrongRows:
    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.zeros((3, 1))


class Broken:
    def fit(self, X, y=None):
        raise RuntimeError("broken")

    def transform(self, X):
        return X


class NotAnEncoder:
    pass


# -- plugins -----------------------------------------------------------------------------------
@pytest.fixture()
def fake_plugin(tmp_path, monkeypatch):
    """An installed distribution declaring an encbench.encoders entry point (a dist-info on sys.path)."""
    info = tmp_path / "fancy_plugin-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fancy-plugin\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(
        "[encbench.encoders]\nFreqRank = tests.byo_encoders:make_frequency_rank\n"
        "OH = tests.byo_encoders:FrequencyRankEncoder\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_plugins_are_listed_and_resolved_by_name(fake_plugin):
    found = {p.name: p for p in custom.plugins()}
    assert "FreqRank" in found and "OH" not in found  # a plugin named like one of the 32 is skipped
    assert (found["FreqRank"].package, found["FreqRank"].version) == ("fancy-plugin", "1.2")
    _, customs = parse_encoders("MT,freqrank")
    assert customs[0].name == "FreqRank" and customs[0].target == "tests.byo_encoders:make_frequency_rank"
    assert customs[0].provenance()["version"] == "1.2"


def test_encoders_command_lists_plugins(fake_plugin, capsys):
    from encbench.cli import main

    assert main(["encoders"]) == 0
    out = capsys.readouterr().out
    assert "CVGLMM_10" in out and "FreqRank" in out and "fancy-plugin 1.2" in out


# -- grid ----------------------------------------------------------------------------------------
def test_grid_carries_custom_encoders_into_run_id_and_tasks():
    spec = parse_encoders(FREQ)[1][0]
    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], custom_encoders=[spec])
    assert grid.encoders == ("OH", "FrequencyRankEncoder")
    assert Grid(**grid.to_dict()).run_id == grid.run_id
    other = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"],
                 custom_encoders=[CustomEncoder(spec.name, spec.target, {"scale": True})])
    assert other.run_id != grid.run_id  # parameters are part of the experiment
    plain = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"])
    assert "custom_encoders" not in plain.to_dict()  # runs without custom encoders keep their ids


def test_plan_refuses_a_leaky_encoder_before_anything_runs():
    from encbench.engine.grid import plan

    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], models=["DT"],
                custom_encoders=[CustomEncoder("Leak", "tests.byo_encoders:LeakyEncoder")])
    with pytest.raises(ValueError, match="custom encoder 'Leak' failed the check on 300 rows of dataset 'tic-tac-toe'"):
        plan(grid)


# -- suites --------------------------------------------------------------------------------------
def test_suite_offline_runs_the_bundled_and_names_the_missing():
    full = suites.resolve_suite("matteucci2023", reachable=lambda: "offline (test)")
    small = suites.resolve_suite("matteucci2023-small", reachable=lambda: "offline (test)")
    assert len(full.available) + len(full.missing) == 50
    assert len(small.available) + len(small.missing) == 30
    assert set(small.available) <= set(full.available) and "31" in full.available
    assert all(full.sources[r] in ("bundled", "openml cache") for r in full.available)
    assert "offline (test)" in full.message() and "profb (470)" in full.message()
    with pytest.raises(ValueError, match="unknown dataset suite"):
        suites.resolve_suite("nope")


# -- end to end from the command line --------------------------------------------------------------
def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "encbench", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def compared_run(tmp_path_factory, published_db):
    import shutil

    from encbench.store import snapshot_path

    folder = tmp_path_factory.mktemp("byo")
    db = folder / "encbench.duckdb"
    shutil.copyfile(published_db, db)
    shutil.copyfile(snapshot_path(published_db), snapshot_path(db))
    params = folder / "params.toml"
    params.write_text("[FreqRank]\nscale = true\n")
    run = _cli("run", "--db", str(db), "--datasets", "bundled:tic-tac-toe,bundled:monks-problems-2",
               "--encoders", f"FreqRank={FREQ}", "--encoder-params", str(params),
               "--models", "DT,LogReg")
    assert run.returncode == 0, run.stderr[-3000:]
    run_id = run.stdout.split("python -m encbench place ")[1].split()[0]
    (folder / "run.out").write_text(run.stdout)
    return db, run_id, folder


def test_cli_compare_reports_controls_ranks_tests_and_exports(compared_run, capsys):
    from encbench.cli import main

    db, run_id, folder = compared_run
    out = folder / "exports"
    capsys.readouterr()
    assert main(["place", run_id, "--db", str(db), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    # the run itself already states the controls' agreement
    assert "controls (MT, OH): 100.0% of 32 cells within 0.005" in (folder / "run.out").read_text()
    # the controls' check comes before the ranking
    assert text.index("controls:") < text.index("rank of the new encoder")
    assert "100.0%" in text.split("rank of the new encoder")[0]  # OH/MT reproduce the published cells
    assert "FreqRank pooled over 2 model(s) x 4 metric(s) (16 voters), rank among 33 encoders" in text
    for strategy in ("R-M", "Q-Th", "R-Nem", "R-Kem", "Q-Imp"):
        assert f"{strategy} " in text.split("FreqRank pooled over")[1]
    files = sorted(p.name for p in out.iterdir())
    assert any(f.startswith("encbench_compare_ranks_") and f.endswith(".csv") for f in files)
    assert any(f.startswith("encbench_compare_cd-pooled_") and f.endswith(".svg") for f in files)
    ranks_csv = next(out.glob("encbench_compare_ranks_*.csv"))
    assert "FreqRank" in set(pd.read_csv(ranks_csv)["encoder"])  # a plain CSV
    # the provenance (the encoder's import path and parameters) is in the sidecar beside it
    provenance = ranks_csv.with_name(ranks_csv.name[:-len(".csv")] + ".provenance.json").read_text()
    assert FREQ in provenance and ('"scale": true' in provenance or '\\"scale\\": true' in provenance)


def test_placement_matches_a_naive_recomputation(compared_run):
    from encbench.placement import place
    from encbench.stats import consensus
    from encbench.store import Reader, queries

    db, run_id, _ = compared_run
    with Reader(db) as reader:
        result = place(reader, run_id, strategies=["R-M", "Q-M"])
        published = queries.load_scores(reader, origins=["published"], datasets=["50", "334"],
                                        models=["DT"], tunings=["no"], scorings=["AUC"])
        mine = queries.load_scores(reader, run_ids=[run_id])
    mine = mine[(mine["encoder"] == "FreqRank") & (mine["model"] == "DT") & (mine["scoring"] == "AUC")]
    naive = consensus(pd.concat([published, mine])[["dataset", "encoder", "cv_score"]], "R-M")
    row = result.ranks[(result.ranks["model"] == "DT") & (result.ranks["scoring"] == "AUC")
                       & (result.ranks["strategy"] == "R-M")].iloc[0]
    assert row["rank"] == naive["FreqRank"] and row["last_rank"] == naive.max()
    assert set(result.scores.loc[result.scores["encoder"].isin(["OH", "MT"]), "origin"]) == {"published"}
    w = result.wilcoxon[(result.wilcoxon["model"] == "DT") & (result.wilcoxon["scoring"] == "AUC")].iloc[0]
    assert w["n"] == 2 and w["wins"] + w["ties"] + w["losses"] == 2


def test_cli_refuses_leaky_encoder_and_name_collision(compared_run, capsys):
    from encbench.cli import main

    db, _, _ = compared_run
    # a dry run runs none of a custom encoder's code; the run's bounded pre-run check refuses it
    from encbench.store import Reader

    def run_ids():
        with Reader(db) as reader:
            return set(reader.query("SELECT run_id FROM runs")["run_id"])

    runs_before = run_ids()
    capsys.readouterr()
    assert main(["run", "--db", str(db), "--datasets", "bundled:tic-tac-toe",
                 "--encoders", "Leak=tests.byo_encoders:LeakyEncoder", "--models", "DT"]) == 2
    leak = capsys.readouterr().err
    assert "leaks the target" in leak, leak[-2000:]
    assert run_ids() == runs_before  # nothing written
    assert main(["run", "--db", str(db), "--datasets", "bundled:tic-tac-toe",
                 "--encoders", f"MT={FREQ}", "--models", "DT", "--dry-run"]) == 2
    assert "collides with the study's encoder 'MT'" in capsys.readouterr().err
    assert main(["place", "local-0000", "--db", str(db)]) == 2
    nothing = capsys.readouterr().err
    assert "unknown run" in nothing
    # the command's old name still works, and says it is the old name
    assert main(["compare", "local-0000", "--db", str(db)]) == 2
    old = capsys.readouterr().err
    assert "unknown run" in old
    assert "`encbench compare` is now `encbench place`" in old and "is now" not in nothing


# -- controls --------------------------------------------------------------------------------------
def test_control_agreement_warns_when_low():
    from encbench.placement import control_agreement

    cells = [(d, e, "DT", "no", s) for d in ("1", "2") for e in ("OH", "MT") for s in ("AUC", "F1")]
    published = pd.DataFrame(cells, columns=["dataset", "encoder", "model", "tuning", "scoring"]).assign(cv_score=0.8)
    good = control_agreement(published.assign(cv_score=0.803), published, ["OH", "MT"])
    assert good.share == 1.0 and good.warning is None and "8 of 8 cells (100.0%)" in good.headline()
    off = published.assign(cv_score=np.where(published["encoder"] == "MT", 0.9, 0.8))
    low = control_agreement(off, published, ["OH", "MT"])
    assert low.share == 0.5 and "only 50.0% of the control cells" in low.warning and "MT/DT 0%" in low.warning
    none = control_agreement(published.iloc[:0], published, ["OH", "MT"])
    assert none.share is None and "no control cell could be checked" in none.warning


def test_resume_config_keeps_the_custom_encoder():
    from encbench.engine.queue_requests import grid_from_config

    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], custom_encoders=parse_encoders(FREQ)[1])
    assert grid_from_config({**grid.to_dict(), "run_id": grid.run_id}).run_id == grid.run_id


def test_cli_controls_option(monkeypatch):
    import argparse

    from encbench.cli import _encoders

    args = argparse.Namespace(encoders=FREQ, encoder_params=None, controls="OH,MT")
    assert _encoders(args)[0] == ("OH", "MT")
    args.controls = "none"
    assert _encoders(args)[0] == ()
    args.controls = "WoE"
    assert _encoders(args)[0] == ("WoE",)
    args.encoders, args.controls = "OH,CB", "OH,MT"
    assert _encoders(args) == (("OH", "CB"), ())  # without a custom encoder nothing is added


def test_cli_suite_offline_names_the_missing_and_plans_the_rest(tmp_path):
    # OpenML unreachable for sure: every connection goes to a closed local port
    env = {**os.environ, "HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "ENCBENCH_CACHE": str(tmp_path / "cache")}
    result = subprocess.run(
        [sys.executable, "-m", "encbench", "run", "--db", str(tmp_path / "x.duckdb"), "--datasets",
         "suite:matteucci2023-small", "--encoders", f"FreqRank={FREQ}", "--models", "DT", "--dry-run"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "suite matteucci2023-small: 14 of 30 datasets available (14 bundled); missing 16: vote (56)" in result.stderr
    assert "OpenML is unreachable" in result.stderr
    assert "run local-" in result.stdout and "tasks" in result.stdout
    assert not (tmp_path / "x.duckdb").exists()  # a dry run creates nothing


# -- every output of a custom encoder is checked ---------------------------------------------------
def _dense_reference(values: np.ndarray) -> int:
    return int(sum(not np.isfinite(v) for v in values.ravel()))


@pytest.mark.parametrize("chunk", [7, 1 << 16])
def test_non_finite_counts_every_value_of_arrays_frames_and_sparse_matrices(chunk, monkeypatch):
    import scipy.sparse

    monkeypatch.setattr(checked_encoder, "_CHECK_CHUNK", chunk)
    rng = np.random.default_rng(28)
    values = rng.normal(size=(50, 6))
    values[rng.random((50, 6)) < 0.05] = np.nan
    values[3, 4], values[40, 1] = np.inf, -np.inf
    expected = _dense_reference(values)
    assert expected > 2
    frame = pd.DataFrame(values).assign(label=["a"] * 50)          # a text column is not counted
    sparse = scipy.sparse.csr_matrix(np.where(rng.random((50, 6)) < 0.5, 0.0, values))
    for output, reference in ((values, expected), (frame, expected), (values.astype(np.float32), expected),
                              (sparse, _dense_reference(sparse.toarray()))):
        count, column = checked_encoder.non_finite(output)
        dense = np.asarray(output.toarray() if hasattr(output, "toarray") else output, dtype=object)
        assert count == reference
        assert not all(np.isfinite(float(v)) for v in dense[:, column])   # the named column holds one
    assert checked_encoder.non_finite(np.ones((5, 2), dtype=int)) == (0, None)


def test_the_checked_encoder_passes_outputs_through_and_names_bad_ones():
    import pickle

    from sklearn.base import clone

    from encbench.encoders.checked import CheckedEncoder
    from tests.byo_encoders import FrequencyRankEncoder

    X, y = _sample()
    X = X.fillna("missing")
    plain = FrequencyRankEncoder().fit_transform(X, y)
    checked = CheckedEncoder(encoder=FrequencyRankEncoder(), name="tests.byo_encoders:FrequencyRankEncoder")
    assert np.array_equal(checked.fit_transform(X, y), plain)
    assert np.array_equal(pickle.loads(pickle.dumps(checked)).transform(X), plain)
    assert np.array_equal(clone(checked).fit(X, y).transform(X), plain)
    bad = checked_encoder.build_from_json(json.dumps({"import": "tests.byo_encoders:NaNEncoder", "params": {}}))
    bad.fit(X, y)
    unseen = X.assign(a=["zzz"] * 60 + list(X["a"][60:]))                # NaN for the unseen level
    with pytest.raises(ValueError, match=r"^transform of encoder 'tests.byo_encoders:NaNEncoder' "
                                         r"returned 60 NaN or infinite values in 120 rows \(e.g. in output "
                                         r"column 0\)"):
        bad.transform(unseen)


def test_the_version_of_a_module_is_read_without_running_it(tmp_path, monkeypatch):
    package = tmp_path / "pkg_version_probe"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('the package ran')\n")
    (package / "encoders.py").write_text("raise RuntimeError('the module ran')\n__version__ = '4.5.6'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert custom.package_of("pkg_version_probe.encoders:Thing") == (None, "4.5.6")
    assert custom.package_of("pkg_version_probe:Thing") == (None, None)
    assert "pkg_version_probe" not in sys.modules


def test_the_check_process_gets_the_memory_limit_of_a_task_of_the_run():
    """A custom encoder's check runs under the cap its tasks get (the budget plus the task base
    of 2 GiB): with a small budget it had 1 GiB, less than a task, and a large encoder library
    failed its check although its tasks would have run."""
    from encbench.engine.budget import TASK_BASE_BYTES, task_memory_limit
    from encbench.engine.custom_check import check_memory_limit

    assert TASK_BASE_BYTES == 2 * 2**30
    assert check_memory_limit("512MiB") == 512 * 2**20 + 2 * 2**30 == task_memory_limit(512 * 2**20)
    assert check_memory_limit("8GB") == 8 * 10**9 + 2 * 2**30
