"""AppTest of the Runs page on a shared server: a run belongs to the session that launched it.

Two AppTests are two browser sessions. The owner session may cancel and delete its run and
sees where its upload is stored; any other session sees neither (and no button), and a queued
delete that does not come from the owner deletes nothing. A read-only server offers no action.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from pagetest import new_app, texts
from streamlit.testing.v1 import AppTest

from encbench.engine.queue import RunQueue, upload_dir
from encbench.engine.queue_requests import new_owner_token
from encbench.engine.queue_worker import serve
from encbench.store import Writer
from encbench.views.runs import WITHHELD_ERROR
from pages.ui.session import READ_ONLY_ENV
from pages.ui.text import md_text

OWNER_KEY = "_encbench_owner"  # pages.ui.session's session-state key of the session's token
RUN = "local-0123456789abcdef"


@pytest.fixture()
def shared(small_private_db, monkeypatch):
    """A local run on an upload, owned by one session's token; (db, token, stored file)."""
    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)  # drained by hand below
    token = new_owner_token()
    stored = upload_dir(small_private_db) / ("ab" * 32 + ".csv")
    stored.parent.mkdir()
    stored.write_text("colour,label\nr,no\ng,yes\n")
    config = {"datasets": [str(stored)], "dataset_options": {str(stored): {"target": "label", "name": "mine.csv"}},
              "encoders": ["OH"], "models": ["LogReg"], "scorings": ["AUC"], "tuning": "no", "label": "mine.csv: label"}
    with Writer(small_private_db) as writer:
        writer.upsert_dataset({"dataset": "file:abababababab", "name": "mine", "source": "upload",
                               "sha256": "ab" * 32})
        writer.ensure_run(RUN, origin="local", label="mine.csv: label", status="failed", n_expected=1,
                          config=config, owner=token)
        writer.set_run_status(RUN, "failed", error=f"cannot read {stored}: broken")
        writer.write_results([dict(run_id=RUN, dataset="file:abababababab", encoder="OH", model="LogReg",
                                   tuning="no", scoring="AUC", fold=0, n_folds=1, cv_score=None, time=0.1,
                                   status="failed", error=f"{stored} vanished")])
    return small_private_db, token, stored


def _session(token: str | None = None) -> AppTest:
    """The Runs page in a new browser session (holding ``token``, else a fresh one of its own)."""
    at = new_app(60)
    if token is not None:
        at.session_state[OWNER_KEY] = token
    at.query_params["run"] = RUN
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="run_choice").value == RUN
    return at


def _keys(at, kind: str) -> set[str]:
    return {w.key for w in getattr(at, kind)}


def _shown(at) -> str:
    """Everything the page shows as text: messages, the configuration, tables."""
    parts = [texts(at), *(str(j.value) for j in at.json)]
    parts += [frame.value.to_csv() for frame in at.dataframe]
    return "\n".join(parts)


def test_the_owner_session_may_delete_its_run_and_sees_its_stored_file(shared):
    db, token, stored = shared
    at = _session(token)
    assert {"cancel", "resume", "delete"} <= _keys(at, "button") and "confirm_delete" in _keys(at, "checkbox")
    assert str(stored) in _shown(at)
    at.checkbox(key="confirm_delete").check().run()
    at.button(key="delete").click().run()
    assert not at.exception, at.exception
    (request,) = RunQueue(db).pending()
    assert request.payload == {"run_id": RUN, "owner": token}
    assert serve(db, idle_exit=0, poll=0.01) == 0             # the worker deletes it
    with Writer(db, publish=False) as writer:
        assert writer.run_status(RUN) is None
    assert not stored.exists()


def test_another_session_sees_no_delete_and_no_stored_path(shared):
    db, token, stored = shared
    at = _session()                                             # a session of its own
    assert at.session_state[OWNER_KEY] != token
    assert not {"cancel", "delete"} & _keys(at, "button") and "confirm_delete" not in _keys(at, "checkbox")
    assert "resume" in _keys(at, "button")                      # resuming removes nothing
    assert "Only the browser session that launched this run" in texts(at)
    shown = _shown(at)
    assert str(stored) not in shown and str(stored.parent) not in shown
    assert "<stored upload>" in shown                            # in the configuration
    # nor its errors, which may quote its file (issue 36.4): the run's, the experiments'
    assert "The run failed: " + md_text(WITHHELD_ERROR) in shown
    assert "broken" not in shown and "vanished" not in shown
    assert RunQueue(db).pending() == []


def test_an_error_quoting_a_file_reaches_its_owner_session_only(shared):
    """A run that failed while its file was read (no run recorded yet, only its failed request)
    has an error quoting a line of the file: the session that launched it reads it, any other
    session reads WITHHELD_ERROR (issue 36.4: /etc/passwd was quoted to every visitor)."""
    db, token, stored = shared
    queue = RunQueue(db)
    grid = {"datasets": [str(stored)], "label": "mine.csv: label"}
    queue.submit("run", {"run_id": "local-00000000000000aa", "grid": grid, "owner": token})
    queue.complete(queue.claim_next(), outcome="failed",
                   error="DatasetError: cannot parse CSV file 'mine.csv': gave up at line 2: expected 2 "
                         "fields as in the header, found 4; the line reads 'SECRETLINE,1,2,3'")
    for session, sees in ((token, True), (None, False)):
        at = _session(session)
        at.selectbox(key="run_choice").set_value("local-00000000000000aa").run()
        assert not at.exception, at.exception
        shown = _shown(at)
        assert ("SECRETLINE" in shown) is sees
        assert (md_text(WITHHELD_ERROR) in shown) is not sees


def test_a_command_line_run_on_a_file_of_its_own_is_not_resumed_from_the_app(shared, tmp_path):
    """A queued run reads only what the app may queue (issue 36.4): a command-line run on a file
    outside the uploads offers no Resume (the worker would refuse it), and says where to resume
    it; the upload's run still resumes."""
    db, token, stored = shared
    own_file = tmp_path / "mine" / "data.csv"
    own_file.parent.mkdir()
    own_file.write_text("colour,label\nr,no\ng,yes\n")
    cli_run = "local-00000000000000bb"
    with Writer(db) as writer:
        writer.ensure_run(cli_run, origin="local", label="cli", status="cancelled", n_expected=5,
                          config={"datasets": [str(own_file)], "encoders": ["OH"], "models": ["LogReg"],
                                  "scorings": ["AUC"], "tuning": "no"})
        writer.set_run_status(cli_run, "cancelled")
    at = _session(token)
    assert not at.button(key="resume").disabled                  # the upload's run
    at.selectbox(key="run_choice").set_value(cli_run).run()
    assert not at.exception, at.exception
    assert at.button(key="resume").disabled
    assert "resume it from the command line" in at.button(key="resume").help


def test_a_command_line_run_with_an_encoder_that_is_no_plugin_is_not_resumed_from_the_app(shared):
    """A queued run builds installed plugins only: a command-line run of an import path of its
    own offers no Resume (the worker would refuse it) and says where to resume it."""
    db, token, _ = shared
    cli_run = "local-00000000000000cc"
    with Writer(db) as writer:
        writer.ensure_run(cli_run, origin="local", label="cli", status="cancelled", n_expected=5,
                          config={"datasets": ["bundled:tic-tac-toe"], "encoders": ["OH", "Mine"],
                                  "models": ["LogReg"], "scorings": ["AUC"], "tuning": "no",
                                  "custom_encoders": {"Mine": {"import": "mypkg.encoders:Mine", "params": {}}}})
        writer.set_run_status(cli_run, "cancelled")
    at = _session(token)
    at.selectbox(key="run_choice").set_value(cli_run).run()
    assert not at.exception, at.exception
    assert at.button(key="resume").disabled
    assert "no installed plugin: resume it from the command line" in at.button(key="resume").help


def test_a_queued_delete_from_another_session_deletes_nothing(shared):
    db, token, stored = shared
    queue = RunQueue(db)
    queue.submit("delete", {"run_id": RUN, "owner": new_owner_token()})
    queue.submit("delete", {"run_id": RUN})                     # no owner at all
    assert serve(db, idle_exit=0, poll=0.01) == 0
    outcomes = [(r.outcome, r.error) for r in queue.done()]
    assert [o for o, _ in outcomes] == ["failed", "failed"]
    assert "launched by another app session" in outcomes[0][1]
    assert "names the app session asking" in outcomes[1][1] and "encbench runs --delete" in outcomes[1][1]
    with Writer(db, publish=False) as writer:
        assert writer.run_status(RUN) == "failed" and writer.run_owner(RUN) == token
    assert stored.exists()


def test_a_read_only_server_offers_no_action_even_to_the_owner(shared, monkeypatch):
    db, token, stored = shared
    monkeypatch.setenv(READ_ONLY_ENV, "1")
    at = _session(token)
    assert not {"cancel", "resume", "delete"} & _keys(at, "button")
    assert "This server is read-only (ENCBENCH_READ_ONLY=1)" in texts(at)
    assert at.dataframe[0].value["run_id"].tolist()[0] == RUN      # runs are still listed


def test_a_run_without_a_label_shows_a_dash_not_none(small_private_db):
    """A command-line run (no --label) shows a dash in the runs table, not "None"."""
    from pages.ui.exports import MISSING

    with Writer(small_private_db) as writer:
        writer.ensure_run("local-00000000000000cc", origin="local", label=None, status="done", n_expected=0,
                          config={"datasets": ["bundled:tic-tac-toe"], "encoders": ["OH"]})
    at = new_app(60)
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    runs = at.dataframe[0].value.set_index("run_id")
    assert runs.loc["local-00000000000000cc", "label"] == MISSING
    assert runs["label"].notna().all() and "None" not in set(runs["label"])


def test_an_encoder_without_a_published_rank_shows_a_dash_in_the_run_result(small_private_db):
    """The run result's reference rank of an encoder the reference never ran reads as a dash, not "None"."""
    from pages.ui.exports import MISSING

    run = "local-00000000000000dd"
    with Writer(small_private_db) as writer:
        writer.ensure_run(run, origin="local", label="three encoders", status="done", n_expected=3,
                          config={"datasets": ["50"], "encoders": ["OH", "MT"], "models": ["DT"]})
        writer.write_results([dict(run_id=run, dataset="50", encoder=encoder, model="DT", tuning="no",
                                   scoring="AUC", fold=0, n_folds=1, cv_score=score, time=0.1, status="ok")
                              for encoder, score in (("OH", 0.9), ("MT", 0.8), ("Mine", 0.85))])
        writer.set_run_status(run, "done")
    at = new_app(60)
    at.query_params["run"] = run
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    result = next(f.value for f in at.dataframe if "reference R-M rank" in f.value.columns).set_index("encoder")
    assert result.loc["Mine", "reference R-M rank"] == MISSING
    assert result.loc[["OH", "MT"], "reference R-M rank"].str.strip().isin(["1", "2"]).all()


def _regression_run(small_private_db, run="local-00000000000000ee"):
    """A finished regression run on an upload (its dataset row says regression)."""
    spec = "/data/prices.csv"
    with Writer(small_private_db) as writer:
        writer.upsert_dataset({"dataset": "file:cdcdcdcdcdcd", "name": "prices", "source": "upload",
                               "sha256": "cd" * 32, "task": "regression"})
        writer.ensure_run(run, origin="local", label="prices.csv: price", status="done", n_expected=1,
                          config={"datasets": [spec], "dataset_options": {spec: {"target": "price"}},
                                  "resolved_datasets": {spec: {"key": "file:cdcdcdcdcdcd", "name": "prices"}}})
    return run


def _runs_page(query: dict | None = None) -> AppTest:
    at = new_app(60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_runs_listed_are_those_of_the_sidebars_task(small_private_db, monkeypatch):
    """As every view shows one task, the Runs page lists the runs of the sidebar's Task (and
    says so), with a task column; a queued run whose target is not read yet is listed under
    every task; the runs of other tasks are counted, not listed."""
    from pages.ui.exports import MISSING

    monkeypatch.setattr(RunQueue, "ensure_worker", lambda self, **kw: False)
    regression = _regression_run(small_private_db)
    queued = RunQueue(small_private_db).submit("run", {"run_id": "local-00000000000000ff",
                                                 "grid": {"datasets": ["31"], "label": "credit"}}).run_id
    at = _runs_page()
    assert at.selectbox(key="task").value == "binary"
    assert "Runs of **binary** tasks" in texts(at)
    table = at.dataframe[0].value.set_index("run_id")
    assert regression not in table.index
    assert "published-matteucci2023" in table.index and queued in table.index
    assert table.loc["published-matteucci2023", "task"] == "binary"
    assert table.loc[queued, "task"] == MISSING              # not known yet: listed under each task
    assert "Not listed: 1 regression run (choose the task in the sidebar)." in texts(at)
    assert regression not in at.selectbox(key="run_choice").options

    at.selectbox(key="task").set_value("regression").run()
    assert not at.exception, at.exception
    assert "Runs of **regression** tasks" in texts(at)
    table = at.dataframe[0].value.set_index("run_id")
    assert set(table.index) == {regression, queued}
    assert table.loc[regression, "task"] == "regression"
    assert "published-matteucci2023" not in at.selectbox(key="run_choice").options

    empty = _runs_page({"task": "multiclass"})
    assert set(empty.dataframe[0].value["run_id"]) == {queued}


def test_a_link_to_a_run_of_another_task_opens_on_its_task(small_private_db):
    """/runs?run=ID of a regression run (a bookmark, or the Run page's link) shows that run, with
    the sidebar's Task set to regression, not a warning that the run does not exist."""
    regression = _regression_run(small_private_db)
    at = _runs_page({"run": regression})
    assert at.selectbox(key="task").value == "regression"
    assert at.selectbox(key="run_choice").value == regression
    assert not at.warning


def test_after_a_launch_the_runs_page_opens_on_the_launched_runs_task(small_private_db):
    """From the menu (no run, no task in the URL) the page opens on the run the session launched
    last, of its task; a task the user chose stays chosen."""
    regression = _regression_run(small_private_db)
    at = new_app(60)
    at.session_state["last_run"] = regression
    at.switch_page("pages/runs.py")
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="task").value == "regression"
    assert at.selectbox(key="run_choice").value == regression
    at.selectbox(key="task").set_value("binary").run()
    assert at.selectbox(key="task").value == "binary"
    assert regression not in at.selectbox(key="run_choice").options


# -- a read-only server creates nothing --------------------------------------------------------
def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_a_read_only_server_creates_no_queue_folder_and_no_lock(small_private_db, monkeypatch):
    """The Runs and Run pages of a read-only server create neither ``queue/`` (nor its folders)
    nor ``worker.lock`` beside the database: listing runs writes nothing."""
    monkeypatch.setenv(READ_ONLY_ENV, "1")
    before = _tree(small_private_db.parent)
    assert not any(name.startswith("queue") for name in before)
    for page in ("runs", "run"):
        at = new_app(60)
        at.switch_page(f"pages/{page}.py")
        at.run()
        assert not at.exception and not at.error, (page, at.exception, at.error)
    assert _tree(small_private_db.parent) == before


@pytest.fixture()
def read_only_mount(tmp_path):
    """A tmpfs at ``tmp_path/ro`` that the test fills, then remounts read-only (as root)."""
    import subprocess

    mount = tmp_path / "ro"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {done.stderr.strip()}")

    def freeze():
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True, capture_output=True)

    try:
        yield mount, freeze
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_read_only_server_works_on_a_read_only_disk(shared, read_only_mount, monkeypatch):
    """Database, snapshot, uploads and a queue holding a request and a file that is not one, all on
    a read-only mount: every page renders, the Runs page lists the run and shows its detail, and
    nothing says "Read-only file system"."""
    import shutil

    from pages.ui.navigation import PAGES

    db, token, _ = shared
    mount, freeze = read_only_mount
    RunQueue(db).submit("run", {"run_id": "local-queued", "grid": {}})
    (RunQueue(db).root / "pending" / "0000-broken.json").write_text("{")
    shutil.copytree(db.parent, mount / "db")
    freeze()
    ro_db = mount / "db" / db.name
    monkeypatch.setenv("ENCBENCH_DB", str(ro_db))
    monkeypatch.setenv(READ_ONLY_ENV, "1")
    before = _tree(mount)
    for page, *_ in PAGES:
        at = new_app(90)
        at.session_state[OWNER_KEY] = token
        at.query_params["run"] = RUN
        at.switch_page(page)
        at.run()
        errors = [e.value for e in at.error if not e.value.startswith("The run failed: ")]  # the run's own
        assert not at.exception and not errors, (page, at.exception, errors)
        assert "Read\\-only file system" not in texts(at) and "Read-only file system" not in texts(at), page
        if page == "pages/runs.py":
            assert at.selectbox(key="run_choice").value == RUN
            assert RUN in at.dataframe[0].value["run_id"].tolist()
            assert not {"cancel", "resume", "delete"} & _keys(at, "button")
    assert _tree(mount) == before
