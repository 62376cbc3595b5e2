"""A real Dask cluster: `dask scheduler` and `dask worker` processes, as docs/user-guide.md starts them.

The scheduler and the workers are their own processes, started from another working directory
without PYTHONPATH: they import encbench only because it is installed (``make`` installs it
editable into .venv). The dataset of the run is a CSV named by a path relative to the client's
working directory, which the workers' directory does not have: its rows can only reach them
through Dask (the executor scatters the payloads), as on nodes that share no filesystem.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import venv
from pathlib import Path

import duckdb
import pytest

from encbench.data import BUNDLED_DIR, read_table

distributed = pytest.importorskip("distributed")

BIN = Path(sys.executable).parent
COORDINATES = "dataset, encoder, model, tuning, scoring, fold"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _clean_env() -> dict:
    """This environment without PYTHONPATH or encbench settings: the package must be installed."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("ENCBENCH_")}


def _start(workdir: Path, name: str, argv: list[str], procs: list, logs: list, env: dict | None = None) -> None:
    log = open(workdir / f"{name}.log", "wb")  # noqa: SIM115 - open while the process runs, closed by _stop
    logs.append(log)
    procs.append(subprocess.Popen(argv, cwd=workdir, env=_clean_env() if env is None else env, stdout=log,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))


def _worker_argv(workdir: Path, address: str, python: Path, name: str) -> list[str]:
    return [str(python), "-m", "dask", "worker", address, "--nthreads", "1", "--no-dashboard", "--name", name,
            "--local-directory", str(workdir / name)]


def _wait_for_workers(workdir: Path, address: str, n: int, procs: list) -> None:
    """Wait until the scheduler at ``address`` has ``n`` workers (90 s at most)."""
    deadline = time.monotonic() + 90
    while True:  # the scheduler needs a moment before it accepts clients
        try:
            with distributed.Client(address, timeout="5s", set_as_default=False) as client:
                client.wait_for_workers(n, timeout=max(1.0, deadline - time.monotonic()))
            return
        except (OSError, TimeoutError) as exc:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError("the Dask cluster did not start: " + "\n".join(
                    (workdir / f).read_text(errors="replace")[-2000:] for f in os.listdir(workdir)
                    if f.endswith(".log"))) from exc
            time.sleep(0.5)


def _stop(procs: list, logs: list) -> None:
    # nothing a test checks needs a graceful close, which took 2-3 s (client.shutdown) or
    # 8 s (SIGTERM: the nanny waits): SIGKILL each process group, a nanny's worker child with it
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    for proc in procs:
        proc.wait()
    for log in logs:
        log.close()


@contextlib.contextmanager
def dask_cluster(workdir: Path, worker_pythons: list[Path], env: dict | None = None):
    """Start ``dask scheduler`` and one ``dask worker`` per given Python; yield the address.

    ``env``: the processes' environment (default :func:`_clean_env`)."""
    workdir.mkdir(parents=True, exist_ok=True)
    address = f"tcp://127.0.0.1:{_free_port()}"
    procs: list = []
    logs: list = []
    try:
        _start(workdir, "scheduler", [str(BIN / "python"), "-m", "dask", "scheduler", "--host", "127.0.0.1",
                                      "--port", address.rsplit(":", 1)[1], "--no-dashboard"], procs, logs, env)
        for index, python in enumerate(worker_pythons):
            _start(workdir, f"worker{index}", _worker_argv(workdir, address, python, f"worker{index}"), procs, logs,
                   env)
        _wait_for_workers(workdir, address, len(worker_pythons), procs)
        yield address
    finally:
        _stop(procs, logs)


@contextlib.contextmanager
def dask_worker(workdir: Path, address: str, name: str):
    """Start one more ``dask worker`` (this environment's) for the scheduler at ``address``."""
    procs: list = []
    logs: list = []
    try:
        _start(workdir, name, _worker_argv(workdir, address, BIN / "python", name), procs, logs)
        _wait_for_workers(workdir, address, 1, procs)
        yield
    finally:
        _stop(procs, logs)


def _encbench(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "encbench"), *args], cwd=cwd, env=_clean_env() if env is None else env,
                          capture_output=True, text=True, timeout=600)


def _results(db: Path):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(f"SELECT {COORDINATES}, cv_score, status FROM results "
                           f"WHERE fold >= 0 ORDER BY {COORDINATES}").df()  # not the published rows


@pytest.mark.slow
def test_a_real_cluster_gives_the_local_scores_bit_for_bit(tmp_path, monkeypatch):
    """The same grid on a two-worker cluster and in a local task process: the same rows bit for
    bit (same code, seeds, one thread); the results stream back from both workers, with one
    progress call per task."""
    from encbench.engine import Grid, run_grid

    client_dir = tmp_path / "client"
    client_dir.mkdir()
    # a user's file, known only to the client (relative path, own working directory)
    read_table(BUNDLED_DIR / "50_tic-tac-toe.arff").to_csv(client_dir / "tictactoe.csv", index=False)
    monkeypatch.chdir(client_dir)
    grid = Grid(datasets=["tictactoe.csv:Class", "bundled:credit-g"], encoders=["OH", "CB", "CVMT_2"],
                models=["LogReg", "DT"], scorings=["AUC", "BAcc"], n_folds=2)

    run_grid(grid, db_path=tmp_path / "local.duckdb", workers=1)
    seen = []
    with dask_cluster(tmp_path / "cluster", [BIN / "python", BIN / "python"]) as address:
        with distributed.Client(address, set_as_default=False) as client:   # where a task says it ran
            workers = {f"{socket.gethostname()}:{pid}" for pid in client.run(os.getpid).values()}
        run_grid(grid, db_path=tmp_path / "cluster.duckdb", scheduler=address,
                 progress=lambda done, total, info: seen.append(info))

    ours, theirs = _results(tmp_path / "cluster.duckdb"), _results(tmp_path / "local.duckdb")
    assert len(ours) == 2 * 3 * 2 * 2 * 2 and set(ours["status"]) == {"ok"}
    assert ours.equals(theirs)                    # bit for bit
    # one call before the first task, then one per task (2 datasets x 3 encoders x 2 folds),
    # from both workers
    assert len(seen) == 1 + 12 and all("task" in info for info in seen[1:])
    assert {info["where"] for info in seen[1:]} == workers and len(workers) == 2


def _env_without_encbench(where: Path) -> Path:
    """A fresh virtual environment reaching this one's packages except the editable encbench.

    A ``.pth`` line naming a directory adds it to ``sys.path`` without processing the ``.pth``
    files inside it, so the editable install's import hook does not run there.
    """
    venv.create(where, with_pip=False)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_encbench_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    probe = subprocess.run([str(python), "-c", "import encbench"],   # its dependencies: the worker starts
                           cwd=where, env=_clean_env(), capture_output=True, text=True)
    assert "No module named 'encbench'" in probe.stderr, probe.stderr
    return python


@pytest.mark.slow
def test_a_worker_without_encbench_or_a_custom_encoder_stops_the_run_with_one_message(tmp_path, published_db):
    """A worker whose environment lacks encbench, and a custom encoder's module that exists only
    beside the client (workers run elsewhere, with no PYTHONPATH), are named in one message
    before any task is sent, each with how to make it importable there; the worker that has
    encbench is named for the custom module only."""
    import shutil

    bare = _env_without_encbench(tmp_path / "bare-env")
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    (client_dir / "my_local_encoders.py").write_text(
        "from sklearn.preprocessing import OrdinalEncoder\n\n\n"
        "def make():\n    return OrdinalEncoder(handle_unknown='use_encoded_value', unknown_value=-1)\n")
    db = tmp_path / "cluster.duckdb"
    shutil.copyfile(published_db, db)             # not imported again: nothing here is about that
    with dask_cluster(tmp_path / "cluster", [BIN / "python", bare]) as address:
        with distributed.Client(address, set_as_default=False) as client:
            names = {info["name"]: addr for addr, info in client.scheduler_info()["workers"].items()}
        # `python -m` puts the client's directory on its sys.path (the user guide's way to use a
        # module of one's own); the workers start elsewhere and cannot import it
        done = subprocess.run(
            [str(BIN / "python"), "-m", "encbench", "run", "--datasets", "bundled:tic-tac-toe",
             "--encoders", "Mine=my_local_encoders:make", "--models", "LogReg", "--metrics", "AUC",
             "--folds", "2", "--scheduler", address, "--db", str(db)],
            cwd=client_dir, env=_clean_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr
    problems = re.findall(r"^- (.*)$", done.stderr, flags=re.MULTILINE)
    assert "the Dask cluster cannot run encbench tasks (3 problems)" in done.stderr, done.stderr
    assert sorted(problems) == sorted([
        f"worker {names['worker0']}: cannot import my_local_encoders (ModuleNotFoundError: "
        f"No module named 'my_local_encoders') in {BIN / 'python'}",
        f"worker {names['worker1']}: cannot import encbench (ModuleNotFoundError: No module named 'encbench') "
        f"in {bare}",
        f"worker {names['worker1']}: cannot import my_local_encoders (ModuleNotFoundError: "
        f"No module named 'my_local_encoders') in {bare}"]), done.stderr
    assert "Custom encoder module(s) my_local_encoders: install their package in every worker's" in done.stderr
    assert "Install the same encbench in every worker's and the scheduler's environment" in done.stderr
    assert len(_results(db)) == 0                 # nothing ran: no local result rows


@pytest.mark.slow
def test_losing_every_dask_worker_stops_the_run_saying_how_to_resume_and_resume_is_bit_identical(
        tmp_path, monkeypatch):
    """The only worker (nanny and all) is killed after the first task: the run stops within the
    grace with a ValueError (the command line prints it, no traceback) saying what happened and
    how to resume; the finished task's rows are kept, and resuming on new workers gives the local
    scores bit for bit."""
    from encbench.engine import dask_executor as executors
    from encbench.engine.grid import Grid
    from encbench.engine.runner import RunIncomplete, run_grid

    monkeypatch.setattr(executors, "WORKERS_GRACE", 3.0)
    monkeypatch.setattr(executors, "WORKERS_CHECK", 0.5)
    grid = Grid(datasets=["bundled:tic-tac-toe"], encoders=["OH", "Ord", "Count", "MT"], models=["LogReg"],
                scorings=["AUC"], n_folds=2)
    db = tmp_path / "lost.duckdb"
    deadline = time.monotonic() + 300                       # without the fix it could wait forever
    with dask_cluster(tmp_path / "cluster", [BIN / "python"]) as address:
        with distributed.Client(address, set_as_default=False) as client:
            (worker_pid,) = client.run(os.getpid).values()

        def kill_every_worker(done, total, info):
            if "task" in info:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(os.getpgid(worker_pid), signal.SIGKILL)   # the nanny and its worker

        with pytest.raises(RunIncomplete) as raised:
            run_grid(grid, db, scheduler=address, progress=kill_every_worker,
                     should_stop=lambda: time.monotonic() > deadline)
        message = str(raised.value)
        assert isinstance(raised.value, ValueError) and "Traceback" not in message
        assert re.fullmatch(
            rf"run {grid.run_id} is incomplete: every Dask worker of the scheduler {re.escape(address)} was lost "
            rf"and none came back within 3 s: (\d) of the (\d) tasks sent finished and their results are kept, "
            rf"the other \d were not run\. Start workers \(`dask worker {re.escape(address)}`\), then re-run "
            rf"the same command to resume: finished tasks are not run again", message), message
        with duckdb.connect(str(db), read_only=True) as con:
            status, error = con.execute("SELECT status, error FROM runs WHERE run_id = ?",
                                        [grid.run_id]).fetchone()
            kept = con.execute("SELECT count(*) FROM results WHERE run_id = ? AND status = 'ok'",
                               [grid.run_id]).fetchone()[0]
        assert status == "failed" and error == message and kept >= 1

        # what the message says: a new worker for the same scheduler, the same run again
        with dask_worker(tmp_path / "cluster", address, "again"):
            assert run_grid(grid, db, scheduler=address) == grid.run_id
    run_grid(grid, tmp_path / "local.duckdb", workers=1)
    resumed, local = _results(db), _results(tmp_path / "local.duckdb")
    assert len(resumed) == 8 and (resumed["status"] == "ok").all()
    assert resumed.equals(local)                                        # bit for bit
