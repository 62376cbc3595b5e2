"""AppTest of the Run page's advice (pages/run_advice.py): the recommendation shown is the
library's, the verdict follows the validation, and the verify button queues the recommended
encoders plus OH through the run queue, whose results then say whether the recommendation held."""
from __future__ import annotations

import pytest
from pagetest import open_page, texts

from encbench import advisor, metafeatures, vocab
from encbench.data import read_table
from encbench.data.bundled import find_bundled
from encbench.engine.grid import Grid
from encbench.engine.queue import RunQueue
from encbench.store import Writer



def _bundled(at, name="tic-tac-toe"):
    at.radio(key="source").set_value("Bundled dataset").run()
    at.selectbox(key="bundled").set_value(name).run()
    assert not at.exception, at.exception
    return at


def _expected(db, name, model, scoring, tuning="no"):
    entry = find_bundled(name)
    features = metafeatures.from_frame(read_table(entry.path), entry.target)
    scores = advisor.reference_scores(features.task)  # binary: the published results and the binary suite
    return advisor.recommend(features, scores[scores["tuning"] == tuning], model=model, scoring=scoring,
                             tuning=tuning)


@pytest.fixture()
def quiet_worker(monkeypatch):
    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)  # drained in engine tests


def test_advice_shows_the_librarys_recommendation_and_verdict(small_private_db):
    at = _bundled(open_page("run"))
    expected = _expected(small_private_db, "tic-tac-toe", "LogReg", "AUC")
    # the shipped validation: always OH's regret (0.0157) is below the global winner's (0.0200),
    # so OH is recommended first and the message says why
    assert expected.use == "OH" and expected.recommended[0] == "OH"
    shown = texts(at)
    assert f"**Recommended: {', '.join(expected.recommended)}** (OH first: the validation's best policy)" in shown
    assert expected.message in shown and "always picking OH had the lowest mean regret" in expected.message
    assert at.get("expander") and at.button(key="advice-verify").label == (
        f"Verify on your data: run {', '.join(dict.fromkeys([*expected.recommended, 'OH']))} with LogReg")
    validation = next(d.value for d in at.dataframe if "recommends" in d.value.columns)
    binary_no = advisor.validation_summary(task="binary").query("tuning == 'no'")
    assert len(validation) == len(binary_no) >= 20 and validation["this"].sum() == 1  # this row marked
    assert validation.loc[validation["this"], "recommends"].item() == "OH"

    # a setting where the shipped validation shows the advisor beating the global winner
    at.selectbox(key="advice-model").set_value("DT").run()
    at.selectbox(key="advice-tuning").set_value("model").run()
    assert not at.exception, at.exception
    used = _expected(small_private_db, "tic-tac-toe", "DT", "AUC", tuning="model")
    assert used.use == "neighbours"
    assert used.message in [s.value for s in at.success]
    assert f"**Recommended: {', '.join(used.recommended)}** (from the similar datasets)" in texts(at)


def test_verify_queues_the_recommendation_and_says_whether_it_held(small_private_db, quiet_worker):
    at = _bundled(open_page("run"))
    at.selectbox(key="advice-model").set_value("DT").run()
    expected = _expected(small_private_db, "tic-tac-toe", "DT", "AUC")
    at.button(key="advice-verify").click().run()
    assert not at.exception, at.exception
    (request,) = RunQueue(small_private_db).pending()
    grid = Grid(**request.payload["grid"])
    encoders = list(dict.fromkeys([*expected.recommended, "OH"]))
    assert grid.datasets == ("bundled:tic-tac-toe",) and set(grid.encoders) == set(encoders)
    assert grid.models == ("DT",) and grid.tuning == "no" and set(grid.scorings) == {"BAcc", "F1", "Acc", "AUC"}
    assert request.payload["owner"] == at.session_state["_encbench_owner"]
    assert at.session_state["last_run"] == grid.run_id
    assert f"0 of {len(encoders)} encoders have AUC results on your data so far" in texts(at)

    # the worker's results: the first recommended encoder scores best by AUC on the data
    scores = {e: 0.9 - 0.01 * i for i, e in enumerate(encoders)}
    with Writer(small_private_db) as writer:
        writer.ensure_run(grid.run_id, origin="local", status="done")
        writer.write_results([dict(run_id=grid.run_id, dataset="50", encoder=e, model="DT", tuning="no",
                                   scoring=s, fold=0, n_folds=1, cv_score=v, time=0.1, status="ok", error=None)
                              for e, v in scores.items() for s in grid.scorings])
    at.run()
    assert not at.exception, at.exception
    held = f"The recommendation held: {encoders[0]}, recommended first, ranks 1 of {len(encoders)}"
    assert any(held in s.value for s in at.success), [s.value for s in at.success]
    table = next(d.value for d in at.dataframe if "rank among those run" in d.value.columns)
    assert table["encoder"].tolist() == encoders and table["rank among those run"].tolist() == [1, 2, 3, 4][
        :len(encoders)]


def _upload(monkeypatch, frame, name):
    """Feed a table to the page as an upload (AppTest cannot drive st.file_uploader)."""
    data = frame.to_csv(index=False).encode()

    class Upload:
        def getvalue(self):
            return data

    Upload.name = name
    monkeypatch.setattr("streamlit.file_uploader", lambda *a, **k: Upload())


@pytest.mark.parametrize("task,target,model,metric", [("multiclass", "species", "LogReg", "AUC"),
                                                      ("regression", "price", "Ridge", "RMSE")])
def test_a_multiclass_or_regression_upload_gets_the_advice_of_its_task(small_private_db, monkeypatch, quiet_worker,
                                                                      task, target, model, metric):
    """The advice was drawn for binary targets only; a multiclass or regression upload gets the
    library's recommendation from the reference datasets of its task, with that task's models,
    metrics and validation rows, and the verify run scores every metric of the task."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(21)
    n = 200
    frame = pd.DataFrame({"shop": rng.choice([f"s{i}" for i in range(25)], n), "size": rng.choice(["S", "M", "L"], n),
                          "x": rng.normal(size=n)})
    frame[target] = (rng.choice(["setosa", "versicolor", "virginica"], n) if task == "multiclass"
                     else np.round(np.exp(rng.normal(3, 1, n)), 2))
    _upload(monkeypatch, frame, f"{task}.csv")
    at = open_page("run")
    at.selectbox(key="target").set_value(target).run()
    assert not at.exception, at.exception
    assert at.selectbox(key=f"task-{target}").value == task
    assert at.selectbox(key=f"advice-model-{task}").value == model
    at.selectbox(key=f"advice-metric-{task}").set_value(metric).run()
    features = metafeatures.from_frame(frame, target)
    scores = advisor.reference_scores(task)
    expected = advisor.recommend(features, scores[scores["tuning"] == "no"], model=model, scoring=metric)
    shown = texts(at)
    assert f"**Recommended: {', '.join(expected.recommended)}**" in shown and expected.message in shown
    assert at.selectbox(key=f"advice-model-{task}").options == vocab.ordered("model", scores["model"].unique())
    validation = next(d.value for d in at.dataframe if "recommends" in d.value.columns)
    assert len(validation) == len(advisor.validation_summary(task=task).query("tuning == 'no'"))
    at.button(key="advice-verify").click().run()
    assert not at.exception, at.exception
    (request,) = RunQueue(small_private_db).pending()
    grid = Grid(**request.payload["grid"])
    from encbench.metrics import metrics_for

    assert grid.models == (model,) and set(grid.scorings) == set(metrics_for(task))


def test_the_run_result_ranks_the_encoders_run_as_the_advice_global_order_does(small_private_db):
    """"The advice says the global R-M order is Sum, OH, WoE; the card says the consensus ranks OH 1,
    WoE 2, Sum 3." After a Verify-like run of those three with LogReg / AUC, the run's table reads
    its reference ranks off the advice's own global ranking."""
    from encbench.engine.queue_requests import new_owner_token

    expected = _expected(small_private_db, "tic-tac-toe", "LogReg", "AUC")
    run = ["OH", "Sum", "WoE"]
    order = [e for e in expected.overall["encoder"] if e in run]          # the advice's global order
    with Writer(small_private_db) as writer:
        writer.ensure_run("local-verify", origin="local", status="done", n_expected=15, owner=new_owner_token())
        writer.write_results([dict(run_id="local-verify", dataset="50", encoder=e, model="LogReg", tuning="no",
                                   scoring="AUC", fold=f, n_folds=5, cv_score=0.9 - 0.01 * i + 0.001 * f,
                                   time=0.1, status="ok", error=None)
                              for i, e in enumerate(run) for f in range(5)])
    at = _bundled(open_page("run"))
    at.session_state["last_run"] = "local-verify"
    at.session_state["last_runs"] = ["local-verify"]
    at.run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "reference R-M rank" in d.value.columns)
    ranks = table.set_index("encoder")["reference R-M rank"].astype(int)
    assert sorted(run, key=lambda e: ranks[e]) == order
    summary = next(m.value for m in at.markdown if "ranks first among these" in m.value)
    assert f"ranks first among these: {order[0]}." in summary
