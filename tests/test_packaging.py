"""encbench as a package: pins agree, resources are found in both layouts, the wheel installs.

The wheel test works offline: the wheel is built with the build backend already in ``.venv``
(``--no-build-isolation``), installed with ``--no-index --no-deps`` into a fresh virtual
environment, and that environment reaches the already-installed dependencies through a ``.pth``
line naming this environment's site-packages (what ``--system-site-packages`` would do for a
base interpreter). ``pip check`` then verifies, in the fresh environment, that the wheel's declared
dependencies are satisfied by those packages, so the metadata is checked even though nothing is
downloaded.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest

from encbench import __version__, resources

REPO = Path(__file__).resolve().parents[1]
TEST_ONLY = {"pytest", "pytest-xdist", "execnet", "playwright", "scikit-posthocs", "baycomp", "ruff"}
BUILD_ONLY = {"setuptools"}


def _pins(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name.strip().lower())] = version.strip()
    return pins


def test_pyproject_pins_equal_requirements():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    required = _pins((REPO / "requirements.txt").read_text().splitlines())
    runtime = {k: v for k, v in required.items() if k not in TEST_ONLY | BUILD_ONLY}
    assert _pins(project["dependencies"]) == runtime
    assert _pins(project["optional-dependencies"]["test"]) == {k: required[k] for k in TEST_ONLY}
    backend = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    assert backend == ["setuptools>=77"] and int(required["setuptools"].split(".")[0]) >= 77
    assert project["scripts"] == {"encbench": "encbench.cli:main"}


def test_a_checkout_uses_its_own_directories(monkeypatch):
    monkeypatch.delenv("ENCBENCH_DB", raising=False)
    monkeypatch.delenv("ENCBENCH_CACHE", raising=False)
    assert resources.checkout_root() == REPO
    assert resources.resource_dir("migrations") == REPO / "db" / "migrations"
    assert resources.resource_dir("seed") == REPO / "db" / "seed"
    assert resources.resource_dir("bundled") == REPO / "data" / "bundled"
    assert resources.default_db_path() == REPO / "db" / "encbench.duckdb"
    assert resources.default_cache_root() == REPO / "db" / "cache"
    with pytest.raises(ValueError, match="unknown resource: got 'models'"):
        resources.resource_dir("models")


def test_an_installed_package_uses_its_resources_and_a_per_user_directory(tmp_path, monkeypatch):
    package = tmp_path / "site-packages" / "encbench"
    package.mkdir(parents=True)
    monkeypatch.setattr(resources, "PACKAGE_DIR", package)
    for name in ("ENCBENCH_DB", "ENCBENCH_CACHE", "ENCBENCH_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resources.checkout_root() is None
    assert resources.resource_dir("seed") == package / "_resources" / "seed"
    home = tmp_path / "home" / ".local" / "share" / "encbench"
    assert resources.data_dir() == home
    assert resources.default_db_path() == home / "encbench.duckdb"
    assert resources.default_cache_root() == home / "cache"
    assert resources.subprocess_cwd() is None and "PYTHONPATH" not in resources.subprocess_env({})
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert resources.data_dir() == tmp_path / "xdg" / "encbench"
    monkeypatch.setenv("ENCBENCH_HOME", str(tmp_path / "mine"))
    assert resources.default_db_path() == tmp_path / "mine" / "encbench.duckdb"
    monkeypatch.setenv("ENCBENCH_DB", str(tmp_path / "x.duckdb"))
    monkeypatch.setenv("ENCBENCH_CACHE", str(tmp_path / "c"))
    assert resources.default_db_path() == tmp_path / "x.duckdb"
    assert resources.default_cache_root() == tmp_path / "c"


def _copy_source(target: Path) -> None:
    """The files a build reads, copied so that building leaves nothing in the checkout."""
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "requirements.txt"):
        shutil.copy2(REPO / name, target / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "_resources")
    for name in ("encbench", "db/migrations", "db/seed", "data/bundled"):
        shutil.copytree(REPO / name, target / name, ignore=ignore)


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_environment_and_runs_from_elsewhere(tmp_path):
    source, wheels, env_dir, elsewhere, home = (tmp_path / n for n in ("src", "wheels", "venv", "elsewhere", "home"))
    for path in (source, elsewhere, home):
        path.mkdir()
    _copy_source(source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                    "-w", str(wheels), str(source)], check=True, timeout=120)
    (wheel,) = wheels.glob("encbench-*.whl")
    assert wheel.name == f"encbench-{__version__}-py3-none-any.whl"

    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    # the dependencies already installed here, reached without processing this environment's
    # .pth files (so the editable encbench of the checkout stays invisible to the import system)
    (purelib / "_encbench_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([*pip, "--python", str(python), "install", "--no-index", "--no-deps", "-q", str(wheel)],
                   check=True, timeout=120)

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ENCBENCH_", "PYTHON", "XDG_", "VIRTUAL_ENV"))}
    env["HOME"] = str(home)
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    def run(*args):
        return subprocess.run(list(args), cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)

    # where encbench comes from, and the bundled datasets travel too (one interpreter for both)
    where = run(str(python), "-c", "import encbench, encbench.resources as r; from encbench.data import "
                                   "load_dataset; print(encbench.__file__); print(r.checkout_root()); "
                                   "print(load_dataset('bundled:tic-tac-toe').X.shape)")
    assert where.returncode == 0, where.stderr
    module_file, root, shape = where.stdout.strip().splitlines()
    assert Path(module_file).is_relative_to(purelib) and root == "None"
    assert shape == "(958, 9)"
    check = run(str(python), "-m", "pip", "check")
    assert check.returncode == 0 and "encbench" not in check.stdout, check.stdout + check.stderr

    script = str(env_dir / "bin" / "encbench")
    info = run(script, "db", "info")
    user_db = home / ".local" / "share" / "encbench" / "encbench.duckdb"
    assert info.returncode != 0 and f"no database at '{user_db}'" in info.stderr, info.stderr
    init = run(script, "db", "init")
    assert init.returncode == 0, init.stderr
    info = run(script, "db", "info")
    assert info.returncode == 0, info.stderr
    assert f"database: {user_db}" in info.stdout
    assert "datasets: 50, encoders: 32" in info.stdout and "results: 61812" in info.stdout
    # migrations come from inside the package: all of them applied
    migrations = sorted(p.name for p in (REPO / "db" / "migrations").glob("*.sql"))
    assert all(f"applying migration {name}" in init.stderr for name in migrations)
    assert not list(elsewhere.iterdir())          # nothing written to the working directory
    # ENCBENCH_DB still overrides the per-user default
    env["ENCBENCH_DB"] = str(tmp_path / "other.duckdb")
    other = run(script, "db", "info")
    assert f"no database at '{tmp_path / 'other.duckdb'}'" in other.stderr


def test_tests_is_this_checkouts_package():
    """A test-only dependency shipping a top-level ``tests`` package (baycomp 1.0.3 does) would
    hide ours from the task processes that import ``tests.byo_encoders``: the set-up removes it."""
    import tests.byo_encoders

    assert Path(tests.byo_encoders.__file__).resolve().parent == REPO / "tests"
