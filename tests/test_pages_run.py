"""AppTest of the "Run on your data" and "Runs" pages (uploads are driven in the browser test)."""
from __future__ import annotations

import pytest
from pagetest import new_app

from encbench.engine.grid import Grid
from encbench.engine.queue import RunQueue
from encbench.engine.queue_requests import RunRequest, default_workers


@pytest.fixture()
def app_db(small_private_db):
    """A writable copy of the small database's published results: the pages read a database and
    queue beside it; none of these tests reads the full published numbers."""
    return small_private_db


def _run_page(path="pages/run.py"):
    at = new_app(60)
    at.switch_page(path)
    at.run()
    assert not at.exception, at.exception
    return at


def test_run_page_asks_for_a_file_first(app_db):
    at = _run_page()
    assert any("Choose a file" in i.value for i in at.info)


def test_bundled_dataset_grid_estimate_and_empty_choice(app_db):
    """The grid estimate counts the pairs a run computes (Native only with a model that takes
    categories; none at all is said, not launched), and an empty choice is named."""
    at = _run_page()
    at.radio(key="source").set_value("Bundled dataset").run()
    at.selectbox(key="bundled").set_value("tic-tac-toe").run()
    assert not at.exception
    groups = at.button_group
    assert sum(len(g.value) for g in groups if g.key.startswith("enc-")) == 32
    assert at.button_group(key="enc-identifier").value == ["OH", "Ord", "Bin"]
    assert any("128 experiments" in i.value for i in at.info)      # 32 x 1 (LogReg) x 4 metrics
    at.button(key="enc-none").click().run()
    at.button_group(key="enc-beyond the study").set_value(["Native"]).run()
    assert any("None of the chosen encoders runs with the chosen models: Native runs only with LGBM, HGB."
               in w.value for w in at.warning), [w.value for w in at.warning]
    at.multiselect(key="models").set_value(["LogReg", "LGBM"]).run()   # Native runs with LGBM only
    assert any("4 experiments (1 encoder x 2 models x 4 metrics, no tuning; Native runs with LGBM only)"
               in i.value for i in at.info), [i.value for i in at.info]
    at.multiselect(key="models").set_value([]).run()
    assert any("Choose at least one of: models" in w.value for w in at.warning)


def test_launch_queues_the_chosen_grid(app_db, monkeypatch):
    queue = RunQueue(app_db)
    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)  # drained in engine tests
    at = _run_page()
    at.radio(key="source").set_value("Bundled dataset").run()
    at.selectbox(key="bundled").set_value("tic-tac-toe").run()
    at.button(key="enc-none").click().run()
    assert any("Choose at least one of: encoders" in w.value for w in at.warning)
    at.button_group(key="enc-identifier").set_value(["OH"]).run()
    at.button_group(key="enc-simple target").set_value(["MT"]).run()
    at.multiselect(key="metrics").set_value(["AUC"]).run()
    at.button(key="launch").click().run()
    assert not at.exception
    (request,) = queue.pending()
    grid = Grid(**request.payload["grid"])
    assert grid.datasets == ("bundled:tic-tac-toe",)
    assert grid.encoders == ("OH", "MT") and grid.models == ("LogReg",) and grid.scorings == ("AUC",)
    assert grid.n_folds == Grid.n_folds
    assert request.payload["workers"] == default_workers()       # the widget's default
    assert request.payload["owner"] == at.session_state["_encbench_owner"]   # this session owns it
    assert any(grid.run_id in s.value for s in at.success)


def test_runs_page_lists_published_and_queued_runs(app_db, monkeypatch):
    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    queue = RunQueue(app_db)
    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], models=["LogReg"], scorings=["AUC"],
                label="queued one")
    queue.submit("run", {"run_id": grid.run_id, "grid": grid.to_dict()})
    at = _run_page("pages/runs.py")
    shown = at.dataframe[0].value
    assert set(shown["status"]) == {"done", "queued"}
    assert "queued one" in set(shown["label"])
    assert "delete" not in {b.key for b in at.button}             # published runs cannot be deleted


def test_leaky_and_id_columns_are_proposed_for_dropping(app_db, monkeypatch):
    """AppTest cannot drive st.file_uploader, so the staged upload is fed through the cache."""
    import numpy as np
    import pandas as pd


    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"colour": rng.choice(["r", "g", "b"], 60), "id": [f"u{i}" for i in range(60)],
                          "label": np.tile(["no", "yes"], 30)})
    frame["copy"] = frame["label"]

    class Upload:
        name = "mine.csv"

        def getvalue(self):
            return frame.to_csv(index=False).encode()

    monkeypatch.setattr("streamlit.file_uploader", lambda *a, **k: Upload())
    at = _run_page()
    # no guessed target (the last column was a binary flag of a multiclass file): asked for
    assert at.selectbox(key="target").value is None
    assert any("Choose the target column" in i.value for i in at.info)
    assert not at.multiselect and "launch" not in {b.key for b in at.button}
    at.selectbox(key="target").set_value("label").run()
    drop = at.multiselect(key="drop-label")
    assert sorted(drop.value) == ["copy", "id"]
    assert not [w.value for w in at.warning if "looks like an ID" in w.value or "leaks" in w.value]
    drop.set_value(["copy"]).run()                              # keep the ID column after all
    assert any("'id' looks like an ID" in w.value for w in at.warning)
    assert "id" in at.multiselect(key="categorical-label-1").value


def test_runs_page_deletes_the_run_named_in_the_url(app_db, monkeypatch):
    """Two runs with the same label: the URL's run id decides which one the buttons act on."""
    from encbench.store import Writer

    from encbench.engine.queue_requests import new_owner_token

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    token = new_owner_token()
    with Writer(app_db) as writer:
        for run_id in ("local-aaa", "local-bbb"):
            writer.ensure_run(run_id, origin="local", label="same label", status="done", n_expected=1,
                              owner=token)
    at = new_app(60)
    at.session_state["_encbench_owner"] = token                  # the session that launched both
    at.query_params["run"] = "local-bbb"
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="run_choice").value == "local-bbb"
    at.checkbox(key="confirm_delete").check().run()
    at.button(key="delete").click().run()
    assert not at.exception, at.exception
    requests = RunQueue(app_db).pending()
    assert [(r.kind, r.run_id) for r in requests] == [("delete", "local-bbb")]
    assert any("Delete requested" in c.value for c in at.caption)


def test_runs_page_resumes_a_run_with_the_workers_it_was_queued_with(app_db, monkeypatch):
    """Resume re-queues the recorded grid with the original request's worker count."""
    from encbench.store import Writer

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH"], models=["LogReg"], scorings=["AUC"],
                label="cancelled one")
    queue = RunQueue(app_db)
    RunRequest(grid, workers=3).submit(queue)
    queue.cancel(grid.run_id)                                   # the request moves to done/
    with Writer(app_db) as writer:
        writer.ensure_run(grid.run_id, origin="local", label=grid.label, status="cancelled", n_expected=4,
                          config={**grid.to_dict(), "run_id": grid.run_id})
        writer.set_run_status(grid.run_id, "cancelled")
    at = new_app(60)
    at.query_params["run"] = grid.run_id
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    at.button(key="resume").click().run()
    assert not at.exception, at.exception
    (request,) = queue.pending()
    assert RunRequest.from_payload(request.payload) == RunRequest(grid, workers=3)


def test_file_and_column_names_are_shown_as_text_not_markdown(app_db, monkeypatch):
    """A file name or a column name is the uploader's: it must not become a link or an image."""
    import numpy as np
    import pandas as pd

    from pages.ui.text import md_text

    frame = pd.DataFrame({"![x](http://x)": [f"u{i}" for i in range(60)],
                          "colour": np.random.default_rng(4).choice(["r", "g"], 60),
                          "label": np.tile(["no", "yes"], 30)})
    uploads = {"name": "[click here](http://x).csv", "data": b""}

    class Upload:
        @property
        def name(self):
            return uploads["name"]

        def getvalue(self):
            return uploads["data"]

    monkeypatch.setattr("streamlit.file_uploader", lambda *a, **k: Upload())
    at = _run_page()
    (error,) = [e.value for e in at.error]
    assert md_text("file '[click here](http://x).csv' is empty") in error
    assert "[click here](http://x)" not in error

    uploads.update(name="mine.csv", data=frame.to_csv(index=False).encode())
    at = _run_page()
    at.selectbox(key="target").set_value("label").run()
    at.multiselect(key="drop-label").set_value([]).run()         # keep the ID-like column
    (warning,) = [w.value for w in at.warning if "looks like an ID" in w.value]
    assert md_text("'![x](http://x)' looks like an ID") in warning
    assert "![x](" not in warning


def _upload(monkeypatch, frame, name="mine.csv"):
    """Feed a table to the page as an upload (AppTest cannot drive st.file_uploader)."""
    data = frame.to_csv(index=False).encode()

    class Upload:
        def getvalue(self):
            return data

    Upload.name = name
    monkeypatch.setattr("streamlit.file_uploader", lambda *a, **k: Upload())


def test_a_copy_of_a_published_dataset_opens_on_its_published_target(app_db, monkeypatch):
    """profb's target is its first column; its last (Overtime) is missing in 640 rows. The page
    proposes the published target and positive class, and judges ID-like columns on every row."""
    from pagetest import texts
    from profb import profb_frame

    _upload(monkeypatch, profb_frame(), "profb.csv")
    at = _run_page()
    assert at.selectbox(key="target").value == "Home/Away"
    assert at.selectbox(key="positive").value == "away"             # the protocol's positive class
    shown = texts(at)
    assert "the published target of OpenML 470 (profb)" in shown
    assert "This file is the published dataset OpenML 470 (profb)" in shown
    assert "looks like an ID" not in shown
    at.selectbox(key="target").set_value("Overtime").run()
    assert not at.exception
    assert any("'Overtime' has 1 class" in e.value for e in at.error)
    assert "looks like an ID" not in texts(at)                        # 28 teams in 672 rows, not 32


def test_a_read_only_server_offers_no_upload_and_no_launch(app_db, monkeypatch):
    monkeypatch.setenv("ENCBENCH_READ_ONLY", "1")
    at = _run_page()
    assert "This server is read-only (ENCBENCH_READ_ONLY=1): uploads and runs are turned off" in at.info[0].value
    assert not at.get("file_uploader") and not at.radio and not at.button
    assert RunQueue(app_db).pending() == []


def _page_links(at) -> list:
    return [element.proto for element in at.get("page_link")]


def test_a_link_to_an_unknown_run_warns_instead_of_showing_another_silently(app_db):
    at = new_app(60)
    at.query_params["run"] = "does-not-exist"
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    (warning,) = [w.value for w in at.warning if "does-not-exist" in w.value]
    assert "which this database does not have" in warning and "ignored" in warning
    assert at.selectbox(key="run_choice").index == 0              # the newest run
    at.run()                                                     # said once, not on every rerun
    assert not [w for w in at.warning if "does-not-exist" in w.value]


def test_after_queueing_the_runs_link_opens_the_queued_run(app_db, monkeypatch):
    """The Runs page remembered another run from an earlier visit; the Run page's link names the
    queued one, and the Runs page opens that one."""
    from encbench.store import Writer

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    with Writer(app_db) as writer:
        writer.ensure_run("local-earlier", origin="local", label="earlier run", status="done", n_expected=1)
    at = new_app(60)
    at.switch_page("pages/runs.py")
    at.run()
    at.selectbox(key="run_choice").set_value("local-earlier").run()
    at.switch_page("pages/run.py")
    at.run()
    at.radio(key="source").set_value("Bundled dataset").run()
    at.selectbox(key="bundled").set_value("tic-tac-toe").run()
    at.button(key="enc-none").click().run()
    at.button_group(key="enc-identifier").set_value(["OH"]).run()
    at.button(key="launch").click().run()
    assert not at.exception, at.exception
    (request,) = RunQueue(app_db).pending()
    (link,) = [p for p in _page_links(at) if p.label == "This run on the Runs page"]
    assert link.query_string == f"run={request.run_id}"
    at.query_params["run"] = request.run_id                      # following the link
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="run_choice").value == request.run_id


def test_a_cv_and_time_launch_counts_and_names_each_of_its_two_runs(app_db, monkeypatch):
    import numpy as np
    import pandas as pd

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"day": pd.date_range("2024-01-01", periods=200, freq="D").strftime("%Y-%m-%d"),
                          "colour": rng.choice(["r", "g", "b"], 200), "label": rng.choice(["no", "yes"], 200)})
    _upload(monkeypatch, frame, "timed.csv")
    at = _run_page()
    at.selectbox(key="target").set_value("label").run()
    at.radio(key="split-mode").set_value("both").run()
    at.button(key="enc-none").click().run()
    at.button_group(key="enc-identifier").set_value(["OH"]).run()
    at.button_group(key="enc-simple target").set_value(["MT"]).run()
    # 2 encoders x 1 model x 4 metrics = 8 experiments; 5 folds: 40 result rows per run
    (estimate,) = [i.value for i in at.info if "runs, one per split" in i.value]
    assert estimate.startswith("2 runs, one per split (cv: 5 stratified folds; time: 5 forward folds over day)")
    assert "each of 8 experiments" in estimate
    assert "10 fold tasks and 40 result rows per run, 80 result rows in all" in estimate
    at.button(key="launch").click().run()
    assert not at.exception, at.exception
    requests = RunQueue(app_db).pending()
    assert len(requests) == 2
    (success,) = [s.value for s in at.success]
    for request in requests:
        kind = "time" if request.payload["grid"].get("split", "cv").startswith("time") else "cv"
        assert f"`{request.run_id}` ({kind}, 40 result rows)" in success
    links = {p.query_string for p in _page_links(at) if p.label == "This run on the Runs page"}
    assert links == {f"run={r.run_id}" for r in requests}
    runs = new_app(60)
    runs.switch_page("pages/runs.py")
    runs.run()
    table = runs.dataframe[0].value.set_index("run_id")
    assert [table.loc[r.run_id, "rows"] for r in requests] == ["0 / 40", "0 / 40"]   # as announced


def test_a_wide_upload_gets_a_compact_column_picker_and_cached_checks(app_db, monkeypatch):
    """Beyond 50 feature columns: one filterable table of checkboxes, choices kept across filters;
    the checks run once per file and choice, not on every rerun."""
    import numpy as np
    import pandas as pd

    import encbench.data

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    rng = np.random.default_rng(8)
    n = 60
    frame = pd.DataFrame({f"c{j:02d}": rng.choice(["a", "b", "c"], n) for j in range(60)})
    frame["num"] = rng.normal(size=n)
    frame["id"] = [f"u{i}" for i in range(n)]
    frame["label"] = np.tile(["no", "yes"], n // 2)

    class Upload:
        name = "wide.csv"

        def getvalue(self):
            return frame.to_csv(index=False).encode()

    calls = []
    real_prepare = encbench.data.prepare

    def counting_prepare(*args, **kwargs):
        calls.append(args[1])
        return real_prepare(*args, **kwargs)

    monkeypatch.setattr("streamlit.file_uploader", lambda *a, **k: Upload())
    monkeypatch.setattr(encbench.data, "prepare", counting_prepare)
    at = _run_page()
    at.selectbox(key="target").set_value("label").run()
    assert not [m for m in at.multiselect if m.key.startswith(("drop-", "categorical-"))]  # no 62-chip lists
    table = at.data_editor(key="columns-label-table-").value
    assert len(table) == 62 and table.columns.tolist() == ["column", "leave out", "categorical", "type",
                                                           "distinct", "missing"]
    assert table.loc[table["leave out"], "column"].tolist() == ["id"]              # the ID column, pre-checked
    assert table.loc[table["categorical"], "column"].tolist() == [f"c{j:02d}" for j in range(60)] + ["id"]
    assert any("62 feature columns: 1 left out, 60 categorical; 62 shown" in c.value for c in at.caption)
    assert len(calls) == 2                                                         # suspects + the choice
    at.selectbox(key="tuning").set_value("model").run()
    assert len(calls) == 2                                                         # cached by file hash

    at.text_input(key="columns-label-filter").input("c0").run()                    # c00 .. c09
    shown = at.data_editor(key="columns-label-table-c0").value
    assert shown["column"].tolist() == [f"c{j:02d}" for j in range(10)]
    at.session_state["columns-label-table-c0"] = {"edited_rows": {3: {"leave out": True}}, "added_rows": [],
                                                   "deleted_rows": []}
    at.run()
    assert not at.exception, at.exception
    assert any("62 feature columns: 2 left out, 59 categorical; 10 shown" in c.value for c in at.caption)
    at.text_input(key="columns-label-filter").input("num").run()                   # integer-like codes: encode
    at.session_state["columns-label-table-num"] = {"edited_rows": {0: {"categorical": True}}, "added_rows": [],
                                                    "deleted_rows": []}
    at.run()
    assert any("62 feature columns: 2 left out, 60 categorical; 1 shown" in c.value for c in at.caption)
    at.text_input(key="columns-label-filter").input("").run()                      # choices kept
    table = at.data_editor(key="columns-label-table-").value
    assert table.loc[table["leave out"], "column"].tolist() == ["c03", "id"]
    assert table.set_index("column").loc["num", "categorical"]

    at.multiselect(key="metrics").set_value(["AUC"]).run()
    at.button(key="launch").click().run()
    assert not at.exception, at.exception
    (request,) = RunQueue(app_db).pending()
    grid = Grid(**request.payload["grid"])
    assert grid.label == "wide.csv: label (without c03, id)"
    (options,) = grid.dataset_options.values()
    assert "num" in options["categorical"] and "c03" not in options["categorical"]


def test_the_task_is_inferred_from_the_target_shown_and_overridable(app_db, monkeypatch):
    """A three-class target reads as multiclass, a numeric one as regression: each gets its own
    models and metrics and no class picker; forcing binary on them gives the refusal that says
    what the target is and what to do."""
    import numpy as np
    import pandas as pd
    from pagetest import texts

    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"colour": rng.choice(["r", "g", "b"], 600), "grade": rng.choice(["A", "B", "C"], 600),
                          "price": np.round(rng.normal(100, 30, 600), 2), "label": rng.choice(["no", "yes"], 600)})
    _upload(monkeypatch, frame, "tasks.csv")
    at = _run_page()
    at.selectbox(key="target").set_value("grade").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="task-grade").value == "multiclass"
    assert "positive" not in {s.key for s in at.selectbox}          # no class picker beyond binary
    assert "No published reference exists for multiclass" in texts(at)
    assert "LogReg" in at.multiselect(key="models-multiclass").options

    at.selectbox(key="target").set_value("price").run()
    assert at.selectbox(key="task-price").value == "regression" and not at.error
    assert at.multiselect(key="metrics-regression").value == ["RMSE", "MAE", "R2"]
    assert "LogReg" not in at.multiselect(key="models-regression").options
    assert at.multiselect(key="models-regression").value == ["Ridge"]
    assert "Task: **regression**" in texts(at)

    at.selectbox(key="task-price").set_value("binary").run()         # overridden: refused, with why
    (error,) = [e.value for e in at.error]
    distinct = frame["price"].nunique()
    assert f"'price' is numeric with {distinct} distinct values" in error and "regression target" in error
    assert "a regression target, not" in error
    at.selectbox(key="target").set_value("label").run()
    assert at.selectbox(key="task-label").value == "binary"
    assert at.selectbox(key="positive").value == "yes" and not at.error


def test_a_regression_upload_queues_a_regression_run(app_db, monkeypatch):
    import numpy as np
    import pandas as pd

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"colour": rng.choice(["r", "g", "b"], 200), "y": rng.normal(0, 1, 200)})
    _upload(monkeypatch, frame, "reg.csv")
    at = _run_page()
    at.selectbox(key="target").set_value("y").run()
    assert at.selectbox(key="task-y").value == "regression"
    at.button(key="enc-none").click().run()
    at.button_group(key="enc-identifier").set_value(["OH"]).run()
    at.button(key="launch").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (request,) = RunQueue(app_db).pending()
    grid = Grid(**request.payload["grid"])
    assert grid.models == ("Ridge",) and grid.scorings == ("RMSE", "MAE", "R2")
    (options,) = grid.dataset_options.values()
    assert options["task"] == "regression"


def test_the_split_choices_name_the_folds_the_task_uses(app_db, monkeypatch):
    """cv folds are stratified for a classification target and shuffled KFold for a regression one
    (encbench.engine.protocol.fold_indices): the time-split choice, its explanation and the
    estimate of a cv and time launch say which, for the task the page runs."""
    import numpy as np
    import pandas as pd
    from pagetest import texts

    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"day": pd.date_range("2024-01-01", periods=200, freq="D").strftime("%Y-%m-%d"),
                          "colour": rng.choice(["r", "g", "b"], 200), "label": rng.choice(["no", "yes"], 200),
                          "price": np.round(rng.normal(100, 30, 200), 2)})
    _upload(monkeypatch, frame, "timed.csv")
    at = _run_page()
    at.selectbox(key="target").set_value("price").run()
    assert at.selectbox(key="task-price").value == "regression"
    at.radio(key="split-mode").set_value("both").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    cv_label = at.radio(key="split-mode").options[0]
    assert cv_label.startswith("cv: shuffled folds (KFold") and "stratified" not in cv_label
    explanation = next(m.value for m in at.markdown if m.value.startswith("**Evaluation split.**"))
    assert "Shuffled folds (cv: KFold" in explanation and "tratified" not in explanation
    (estimate,) = [i.value for i in at.info if "runs, one per split" in i.value]
    assert estimate.startswith("2 runs, one per split (cv: 5 shuffled folds (KFold); time: 5 forward folds")
    assert "tratified" not in texts(at).replace("stratified for classes", "")  # the task's help says both

    at.selectbox(key="target").set_value("label").run()      # a binary target: stratified, as published
    assert at.selectbox(key="task-label").value == "binary"
    assert at.radio(key="split-mode").options[0] == "cv: stratified folds (published protocol)"
    (estimate,) = [i.value for i in at.info if "runs, one per split" in i.value]
    assert estimate.startswith("2 runs, one per split (cv: 5 stratified folds; time: 5 forward folds")


def _write_run(db, run_id, cells, *, dataset="file:1fc29d608411", name="flights.csv", model="LogReg",
               scorings=("AUC", "BAcc"), task="binary", split="cv", owner=None):
    """A finished local run: ``cells`` maps an encoder to its fold scores (the same for every
    metric but shifted by the metric's index, so the metrics differ)."""
    from encbench.store import Writer

    with Writer(db) as writer:
        writer.upsert_dataset({"dataset": dataset, "name": name, "source": "upload", "task": task})
        writer.ensure_run(run_id, origin="local", status="done", owner=owner,
                          n_expected=len(cells) * len(scorings) * len(next(iter(cells.values()))))
        writer.write_results([dict(run_id=run_id, dataset=dataset, encoder=e, model=model, tuning="no", scoring=s,
                                   fold=f, n_folds=len(values), cv_score=v - 0.001 * i, time=0.1, status="ok",
                                   error=None, split=split, task=task)
                              for e, values in cells.items() for i, s in enumerate(scorings)
                              for f, v in enumerate(values)])


def _follow(at, run_id):
    """Open the Run page following ``run_id`` as its launch would (a bundled dataset chosen, so
    the page reaches *Your run*)."""
    at.session_state["source"] = "Bundled dataset"
    at.session_state["last_run"] = run_id
    at.session_state["last_runs"] = [run_id]
    return at


def test_a_run_result_gives_one_answer_a_chart_a_warning_and_one_export(app_db):
    """"One card per model x metric with large n/a tiles, ranks without spread, no chart, one
    export per card": the run is answered once (which encoder, and that MT cannot be told from
    OH over the folds), with a chart of scores and their spread, one Download menu for the whole
    result named after the file, and the settings below; a setting at chance level is warned."""
    from pagetest import charts, open_exports, texts

    _write_run(app_db, "local-answer", {"Drop": [.80, .79, .81, .80, .80], "OH": [.95, .93, .96, .94, .95],
                                        "MT": [.94, .96, .93, .95, .945], "Count": [.90, .91, .89, .90, .90]})
    at = new_app(60)
    at.switch_page("pages/run.py")
    _follow(at, "local-answer").run()
    assert not at.exception, at.exception
    shown = texts(at)
    answer = next(m.value for m in at.markdown if m.value.startswith("**Which encoder for this data?**"))
    assert "Use OH" in answer or "Use MT" in answer
    assert "not a clear lead" in answer and "cannot be told from" in answer
    assert not [m for m in at.metric if m.label == "Spearman rho"]              # no n/a tiles
    assert len(charts(at)) == 1
    menus = [p for p in at.get("popover") if "exports-" in str(p.proto)]
    assert len(menus) == 1                                                    # one export of the whole result
    at = open_exports(at, "chart-result")
    assert {b.key for b in at.download_button} == {f"dl-chart-result-{f}" for f in (
        "png", "svg", "csv", "parquet", "latex", "provenance")}
    # the export is named after the file, not its key (its file name is made when clicked)
    from encbench.export import Provenance
    from encbench.store import Reader, queries
    from pages.ui.run_panels import result_filters

    with Reader(app_db) as reader:
        rows = queries.load_scores(reader, run_ids=["local-answer"])
    name = Provenance("run-result", result_filters("local-answer", "flights.csv", "file:1fc29d608411", rows)
                      ).file_name("result", "csv")
    assert name.startswith("encbench_run-result_result_dataset=flights.csv_run=local-answer_model=LogReg"), name
    assert "LogReg / AUC / no tuning: best" in " ".join(e.proto.label for e in at.expander)
    assert "Drop (the categorical columns left out) was not run" not in shown
    assert not at.warning or not any("chance" in w.value for w in at.warning)

    _write_run(app_db, "local-chance", {"OH": [.50, .51, .49, .52, .495], "MT": [.49, .50, .51, .50, .50]},
               dataset="file:2", name="noise.csv", scorings=("BAcc",))
    at = new_app(60)
    at.switch_page("pages/run.py")
    _follow(at, "local-chance").run()
    assert not at.exception, at.exception
    assert any("not clearly above chance" in w.value and "OH" in w.value for w in at.warning)
    assert "Drop (the categorical columns left out) was not run" in texts(at)


def _flights(n=240, seed=12):
    """A flights-like file: R's row numbers, a time stamp per row, a carrier, a three-class target
    and a binary column last."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    return pd.DataFrame({"rownames": np.arange(1, n + 1),
                         # several flights an hour: not unique, so not ID-like
                         "time_hour": np.repeat(pd.date_range("2013-01-01", periods=n // 3, freq="h")
                                                .strftime("%Y-%m-%d %H:%M:%S"), 3),
                         "carrier": rng.choice(["UA", "AA", "B6", "DL"], n),
                         "delay": rng.choice(["early", "on time", "late"], n),
                         "minority": rng.choice(["no", "yes"], n)})


def test_time_and_id_columns_are_not_encoded_or_proposed_as_time_by_default(app_db, monkeypatch):
    """flights' time_hour was pre-selected as a categorical feature *and* offered as the time
    column; its row numbers (rownames) were left out as an ID *and* proposed as the time column.
    Now the time stamp is proposed for leaving out (so neither encoded nor in the advice's
    meta-features) and as the time column; the row numbers only for leaving out."""
    _upload(monkeypatch, _flights(), "flights.csv")
    at = _run_page()
    at.selectbox(key="target").set_value("delay").run()
    assert not at.exception, at.exception
    assert at.radio(key="split-mode")                                   # a time column is proposed
    explanation = next(m.value for m in at.markdown if m.value.startswith("**Evaluation split.**"))
    assert "`time_hour`" in explanation and "rownames" not in explanation
    assert sorted(at.multiselect(key="drop-delay").value) == ["rownames", "time_hour"]
    assert at.multiselect(key="categorical-delay-2").value == ["carrier", "minority"]
    at.radio(key="split-mode").set_value("time").run()
    assert at.selectbox(key="time-column").options == ["time_hour"]
    assert at.multiselect(key="drop-delay-time_hour").value == ["rownames"]


def test_beyond_binary_woe_is_not_offered_and_the_encoders_beyond_the_study_are(app_db, monkeypatch):
    """For a multiclass target the WoE pill is off and the encoders beyond the study can be
    chosen on the Run page; the note beside a multiclass task points at no advice "below" that
    is not shown."""
    from pagetest import texts

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    _upload(monkeypatch, _flights(), "flights.csv")
    at = _run_page()
    at.selectbox(key="target").set_value("minority").run()
    assert "WoE" in at.button_group(key="enc-simple target").value            # binary: offered, on
    at.selectbox(key="target").set_value("delay").run()
    assert at.selectbox(key="task-delay").value == "multiclass"
    woe = at.button_group(key="enc-simple target")
    assert "WoE" not in woe.options and "WoE" not in woe.value
    shown = texts(at)
    assert "the advice below" not in shown and "the encoder advice reads encbench's own benchmark" in shown
    beyond = at.button_group(key="enc-beyond the study")
    assert "SkTE" in beyond.options and beyond.value == []                   # offered, not chosen
    at.button(key="enc-none").click().run()
    at.button_group(key="enc-beyond the study").set_value(["SkTE"]).run()
    at.multiselect(key="metrics-multiclass").set_value(["BAcc"]).run()
    at.button(key="launch").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (request,) = RunQueue(app_db).pending()
    assert Grid(**request.payload["grid"]).encoders == ("SkTE",)


def test_a_refused_target_is_told_what_to_choose_on_the_page_not_in_python(app_db, monkeypatch):
    """Forcing a binary task on a numeric target answered "load it with task='regression'",
    a Python keyword the page's user never types: the page names its Task box."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(2)
    _upload(monkeypatch, pd.DataFrame({"colour": rng.choice(["r", "g"], 200),
                                       "price": np.round(rng.normal(100, 30, 200), 2)}), "prices.csv")
    at = _run_page()
    at.selectbox(key="target").set_value("price").run()
    at.selectbox(key="task-price").set_value("binary").run()
    (error,) = [e.value for e in at.error]
    assert "task=" not in error.replace("\\", "") and "set the Task box above to regression" in error


def test_an_earlier_upload_is_mentioned_only_to_the_session_that_uploaded_it(app_db, monkeypatch):
    """"This exact file was uploaded before" told any session that someone else had uploaded the
    same bytes; only the session whose run stored the file is told now."""
    from encbench.engine.queue_requests import new_owner_token

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    _upload(monkeypatch, _flights(), "flights.csv")
    mine = new_owner_token()
    at = new_app(60)
    at.session_state["_encbench_owner"] = mine
    at.switch_page("pages/run.py")
    at.run()
    assert not any("exact file" in i.value for i in at.info)
    at.selectbox(key="target").set_value("minority").run()
    at.multiselect(key="drop-minority").set_value([]).run()    # the file as uploaded is stored
    at.button(key="enc-none").click().run()
    at.button_group(key="enc-identifier").set_value(["OH"]).run()
    at.button(key="launch").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    other = _run_page()                                        # another browser session, same bytes
    assert not any("exact file" in i.value for i in other.info)
    again = new_app(60)
    again.session_state["_encbench_owner"] = mine              # the uploader, on a later page load
    again.switch_page("pages/run.py")
    again.run()
    assert any("You uploaded this exact file before" in i.value for i in again.info)


def test_the_whole_result_table_of_a_regression_run_claims_no_published_rank(app_db):
    """The whole-result export of a regression run: every metric and encoder with its fold
    spread and ranks, and no published rank (the study has none beyond binary)."""
    from encbench.store import Reader, queries
    from encbench.views.run_result import compare_with_published, pool_run
    from pages.ui.run_panels import result_table

    _write_run(app_db, "local-reg", {"Drop": [3.0, 3.2, 3.1], "MT": [1.0, 1.1, 0.9]}, model="Ridge",
               scorings=("RMSE", "MAE"), task="regression", dataset="file:r", name="prices.csv")
    with Reader(app_db) as reader:
        rows = queries.load_scores(reader, run_ids=["local-reg"])
        folds = queries.fold_scores(reader, ["local-reg"])
    table = result_table(pool_run(folds), compare_with_published(rows, rows.iloc[:0]), "prices.csv", "R-M")
    assert "reference_R-M_rank" not in table.columns and len(table) == 4
    assert set(table["dataset"]) == {"prices.csv"}
    mt = table[(table["encoder"] == "MT") & (table["scoring"] == "RMSE")].iloc[0]
    assert mt["score_mean"] == pytest.approx(1.0) and mt["score_fold_sd"] == pytest.approx(0.1)
    assert mt["rank_in_setting"] == 1 and mt["pooled_rank"] == 1 and mt["n_folds"] == 3
