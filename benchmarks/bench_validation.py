"""Validation of wide files: from read to report, and on the Run page from upload to Launch.

Cases (seeded numpy; half the columns text of 4 levels, half numbers, a yes/no label):

- ``2,000 columns x 300 rows`` (2.5 MB CSV): read, :func:`encbench.data.prepare` (the whole
  validation, the leakage check included), and the leakage check alone next to the per-column
  computation it replaced (one ``roc_auc_score`` per column, re-implemented here as it was);
- ``10,000 columns x 300 rows`` (9,999 features and the label): read + validation (the widest
  table accepted, ``encbench.data.MAX_COLUMNS``);
- ``1,000,000 columns x 1 row``: the time to refuse it;
- the Run page under AppTest (``streamlit.testing``, the upload fed to ``st.file_uploader`` as in
  tests/test_pages_run.py): the first run, from the upload to the Launch button, and a rerun after
  a widget change (the validation is cached by the file's hash).

Prints the median of ``--repeat`` runs (each read from a fresh copy of the file, so the readers'
cache does not answer). Measured on the 2-core machine shared with other jobs (load average
15-21, so several times an idle machine's figures), 2,000 columns x 300 rows: read 0.3-0.5 s,
validation 1.6-2.8 s, read to report 1.9-3.5 s; the leakage check 0.4-1.1 s vectorised against
30-65 s per column (same AUCs to 1e-12; the whole validation took 56 s before); 10,000 columns:
15-20 s read to report (250 s for a dry run before); a million columns refused in about 1 s;
the Run page under AppTest 13-26 s from upload to Launch on first paint (about half of it
AppTest's own handling of the 2,000-row tables, 4 s the advice expander's meta-features),
1.2-1.5 s per rerun.

Usage: ``.venv/bin/python benchmarks/bench_validation.py [--repeat 5] [--skip-page]``
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from encbench.data import DatasetError, prepare, read_table  # noqa: E402
from encbench.data.columns import as_category_text  # noqa: E402
from encbench.data.leakage import single_feature_aucs  # noqa: E402


def wide_frame(n_rows: int, n_columns: int, seed: int = 0) -> pd.DataFrame:
    """``n_columns`` features (even: numbers, odd: text of 4 levels) and a yes/no label."""
    rng = np.random.default_rng(seed)
    columns = {}
    for j in range(n_columns):
        if j % 2:
            columns[f"c{j}"] = rng.choice(["a", "b", "c", "d"], n_rows)
        else:
            columns[f"n{j}"] = rng.normal(size=n_rows).round(3)
    columns["label"] = np.tile(["no", "yes"], n_rows // 2 + 1)[:n_rows]
    return pd.DataFrame(columns)


def per_column_aucs(frame: pd.DataFrame, positive: np.ndarray, categorical: set) -> list[float]:
    """The leakage check before it was vectorised: one scikit-learn AUC per column."""
    from sklearn.metrics import roc_auc_score

    out = []
    for name in frame.columns:
        column = frame[name]
        if name in categorical:
            text = as_category_text(column).fillna("<missing>").to_numpy(dtype=object)
            half = np.random.default_rng(1).permutation(len(text)) % 2 == 0
            aucs = []
            for part in (half, ~half):
                other = ~part
                rates = pd.Series(positive[other]).groupby(text[other]).mean()
                score = pd.Series(text[part]).map(rates).fillna(positive[other].mean()).to_numpy(dtype=float)
                aucs.append(float(roc_auc_score(positive[part], score)) if np.ptp(score) > 0 else 0.5)
            auc = float(np.mean(aucs))
        else:
            score = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
            auc = float(roc_auc_score(positive, score))
        out.append(max(auc, 1 - auc))
    return out


def _median(times: list[float]) -> str:
    return f"{statistics.median(times):7.2f} s (min {min(times):.2f}, max {max(times):.2f}, n={len(times)})"


def read_and_validate(frame: pd.DataFrame, tmp: Path, repeat: int, label: str) -> None:
    source = tmp / f"wide{frame.shape[1]}.csv"
    frame.to_csv(source, index=False)
    reads, checks, totals = [], [], []
    for i in range(repeat):
        copy = tmp / f"wide{frame.shape[1]}-{i}.csv"
        shutil.copyfile(source, copy)
        start = time.perf_counter()
        table = read_table(copy)
        middle = time.perf_counter()
        report = prepare(table, "label", source=copy.name).report
        end = time.perf_counter()
        assert report.ok, report.errors
        reads.append(middle - start)
        checks.append(end - middle)
        totals.append(end - start)
    print(f"{label} ({source.stat().st_size / 1e6:.1f} MB CSV)")
    print(f"  read                 {_median(reads)}")
    print(f"  validation           {_median(checks)}")
    print(f"  read to report       {_median(totals)}")


def leak_check(frame: pd.DataFrame, repeat: int) -> None:
    features = frame.drop(columns="label")
    positive = frame["label"].to_numpy() == "yes"
    categorical = {c for c in features.columns if c.startswith("c")}
    new, old = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        vectorised = single_feature_aucs(features, positive, sorted(categorical))
        new.append(time.perf_counter() - start)
    for _ in range(max(1, repeat // 2)):
        start = time.perf_counter()
        reference = per_column_aucs(features, positive, categorical)
        old.append(time.perf_counter() - start)
    assert np.allclose(vectorised.to_numpy(), reference, rtol=0, atol=1e-12)
    print(f"  leakage check, vectorised    {_median(new)}")
    print(f"  leakage check, per column    {_median(old)}  (same AUCs to 1e-12)")


def refuse_million_columns(tmp: Path) -> None:
    path = tmp / "million.csv"
    header = ",".join(f"c{i}" for i in range(1_000_000))
    path.write_text(f"{header}\n{','.join(['1'] * 1_000_000)}\n")
    start = time.perf_counter()
    try:
        read_table(path)
    except DatasetError as exc:
        elapsed = time.perf_counter() - start
        print(f"1,000,000 columns x 1 row ({path.stat().st_size / 1e6:.1f} MB): refused in {elapsed:.2f} s: {exc}")
    else:  # pragma: no cover - the limit is the point
        raise SystemExit("a million columns were accepted")


def run_page(frame: pd.DataFrame, repeat: int) -> None:
    """The Run page under AppTest: upload to Launch button, then a rerun after a widget change."""
    import os

    import streamlit
    from streamlit.testing.v1 import AppTest

    from encbench.store import Writer

    data = frame.to_csv(index=False).encode()

    class Upload:
        name = "wide.csv"

        def getvalue(self):
            return data

    streamlit.file_uploader = lambda *a, **k: Upload()
    firsts, reruns = [], []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "e.duckdb"
        with Writer(db):
            pass
        os.environ["ENCBENCH_DB"] = str(db)
        for _ in range(repeat):
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
            at.switch_page("pages/run.py")
            start = time.perf_counter()
            at.run()
            at.selectbox(key="target").set_value("label").run()  # no target is preset for a file
            firsts.append(time.perf_counter() - start)
            assert not at.exception, at.exception
            assert at.button(key="launch")
            start = time.perf_counter()
            at.selectbox(key="tuning").set_value("model").run()
            reruns.append(time.perf_counter() - start)
            assert not at.exception, at.exception
    print(f"Run page, {frame.shape[1] - 1:,} columns x {len(frame)} rows (AppTest)")
    print(f"  upload to Launch     {_median(firsts)}")
    print(f"  rerun (tuning)       {_median(reruns)}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-page", action="store_true")
    args = parser.parse_args(argv)
    wide = wide_frame(300, 2000)  # 2,000 features and the label
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        read_and_validate(wide, tmp, args.repeat, "2,000 columns x 300 rows")
        leak_check(wide, args.repeat)
        read_and_validate(wide_frame(300, 9_999, seed=1), tmp, max(1, args.repeat // 2),
                          "10,000 columns x 300 rows")
        refuse_million_columns(tmp)
    if not args.skip_page:
        run_page(wide, max(1, args.repeat // 2))


if __name__ == "__main__":
    main()
