"""Uploaded datasets: stage, validate, keep by content hash, and turn into a queued run.

An upload is first written to a private staging directory (outside ``db/``) and validated there;
only a launched run copies it to ``<db dir>/uploads/<sha256><suffixes>``, so a rejected upload
leaves no trace next to the database.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import logging
import os
import re
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from encbench.data import (
    DEFAULT_MAX_BYTES, DatasetError, ValidationReport, infer_column_types, prepare, read_table_and_hash,
)
from encbench.engine.grid import Grid
from encbench.engine.queue import RunQueue, upload_dir
from encbench.engine.queue_requests import RunRequest, custom_encoder_problems
from encbench.engine.splits import check_forward_folds, check_time_column, parse_split

log = logging.getLogger(__name__)

_SUFFIX = re.compile(r"(\.(csv|tsv|txt|parquet|pq|arff))(\.gz)?$", re.IGNORECASE)


def _suffixes(filename: str) -> str:
    match = _SUFFIX.search(filename)
    return match.group(0).lower() if match else ""


@dataclass(frozen=True)
class StagedUpload:
    """An uploaded file, staged and read (or not) but not yet part of the database.

    Attributes
    ----------
    errors
        Problems that make the file unusable before any column is chosen (empty, unparseable
        with its line number, over the size limit, duplicate column names).
    frame
        The table as read, or None when ``errors`` is not empty.
    previous
        Path of the identical file uploaded before by the session that staged it (same content
        hash; :func:`previous_upload`), else None.
    """

    filename: str
    size: int
    sha256: str
    path: Path | None
    frame: pd.DataFrame | None = None
    errors: list[str] = field(default_factory=list)
    previous: Path | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def column_types(self) -> pd.DataFrame:
        """Inferred type per column (categorical / numerical / other) for the preview."""
        if self.frame is None:
            return pd.DataFrame(columns=["column", "type", "distinct", "missing"])
        categorical, numerical, _ = infer_column_types(self.frame)
        kinds = {c: "categorical" for c in categorical} | {c: "numerical" for c in numerical}
        return pd.DataFrame({  # whole-frame counts: one call, not one per column (wide files)
            "column": [str(c) for c in self.frame.columns],
            "type": [kinds.get(c, "other") for c in self.frame.columns],
            "dtype": [str(t) for t in self.frame.dtypes],
            "distinct": self.frame.nunique().to_numpy(dtype=int),
            "missing": self.frame.isna().sum().to_numpy(dtype=int),
        })


#: staged files older than this (seconds) are removed the next time a file is staged.
STAGING_MAX_AGE = 24 * 3600.0


def staging_dir() -> Path:
    """This user's private staging directory (mode 0700), created if needed.

    Uploads may hold private data: the directory is per user and closed to others, and a
    directory of that name that is a symlink or belongs to someone else is refused.
    """
    path = Path(tempfile.gettempdir()) / f"encbench-staging-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise ValueError(f"staging directory {str(path)!r} is not a directory owned by this user; "
                         f"remove it: got mode {oct(info.st_mode)}, owner uid {info.st_uid}")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def expire_staged(max_age: float = STAGING_MAX_AGE, *, now: float | None = None) -> int:
    """Remove staged files older than ``max_age`` seconds; return how many were removed."""
    now = time.time() if now is None else now
    removed = 0
    for entry in staging_dir().iterdir():
        try:
            if entry.is_file() and now - entry.stat().st_mtime > max_age:
                entry.unlink()
                removed += 1
        except FileNotFoundError:  # another session expired it first
            continue
    if removed:
        log.info("removed %d staged uploads older than %.0f h", removed, max_age / 3600)
    return removed


def find_previous(sha256: str, db_path: Path | str | None = None) -> Path | None:
    """The stored upload with this content hash, if the same file was uploaded before."""
    matches = sorted(upload_dir(db_path).glob(f"{sha256}.*")) + sorted(upload_dir(db_path).glob(sha256))
    return matches[0] if matches else None


def previous_upload(sha256: str, owner: str | None, db_path: Path | str | None = None) -> Path | None:
    """The stored upload with this content hash, if ``owner`` (an app session's token) launched a
    run on it; None for anyone else.

    That the same bytes were uploaded before is the uploader's to know: told to any session, it
    would tell one user what another uploaded. The runs a session launched are its requests in
    the run queue (pending, active or done; they carry its token and the stored file's path).
    """
    if not owner:
        return None
    path = find_previous(sha256, db_path)
    if path is None:
        return None
    queue = RunQueue(db_path, read_only=True)  # reading it creates nothing
    for request in queue.pending() + queue.active() + queue.done():
        payload = request.payload
        if request.kind != "run" or not isinstance(payload.get("owner"), str) \
                or not hmac.compare_digest(payload["owner"], owner):
            continue
        datasets = (payload.get("grid") or {}).get("datasets") or ()
        if any(isinstance(d, str) and Path(d).name == path.name for d in datasets):
            return path
    return None


def stage_upload(data: bytes, filename: str, *, max_bytes: int | None = DEFAULT_MAX_BYTES,
                 db_path: Path | str | None = None, owner: str | None = None) -> StagedUpload:
    """Stage and read an uploaded file; problems come back in ``errors``, never as exceptions.

    ``previous`` is set only for ``owner``, the session that launched a run on the same bytes
    (:func:`previous_upload`); without an owner it is None."""
    sha = hashlib.sha256(data).hexdigest()
    size = len(data)
    if size == 0:
        return StagedUpload(filename, 0, sha, None, errors=[f"file {filename!r} is empty"])
    if max_bytes is not None and size > max_bytes:
        return StagedUpload(filename, size, sha, None, errors=[
            f"file {filename!r} is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB size limit"])
    try:
        expire_staged()
        path = staging_dir() / f"{sha}{_suffixes(filename)}"
        if path.exists():
            os.utime(path)  # staged again: young again
        else:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
    except (OSError, ValueError) as exc:
        return StagedUpload(filename, size, sha, None,
                            errors=[f"cannot stage file {filename!r}: {exc}"])
    try:
        frame, _ = read_table_and_hash(path, max_bytes=max_bytes, label=filename)
    except Exception as exc:  # the docstring promises no exceptions
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a rejected upload is not kept
        if isinstance(exc, DatasetError):
            return StagedUpload(filename, size, sha, None, errors=list(exc.errors))
        log.warning("reading upload %s failed unexpectedly", filename, exc_info=True)
        return StagedUpload(filename, size, sha, None, errors=[
            f"cannot read file {filename!r}: {type(exc).__name__}: {exc}"])
    return StagedUpload(filename, size, sha, path, frame=frame, previous=previous_upload(sha, owner, db_path))


def check_upload(staged: StagedUpload, target: str | None, positive_class=None, *,
                 categorical: list[str] | None = None, n_folds: int = Grid.n_folds,
                 task: str | None = "binary") -> ValidationReport:
    """Validate a staged upload for the chosen target (errors and warnings name the problem).

    ``task`` is the task type the upload is run for: binary (the app's, default), multiclass,
    regression, or None to infer it from the target.
    """
    if not staged.ok:
        return ValidationReport(errors=list(staged.errors), target=target)
    return prepare(staged.frame, target, positive_class, categorical, n_folds, source=staged.filename,
                   task=task).report


def without_columns(staged: StagedUpload, drop: list[str], *,
                    db_path: Path | str | None = None) -> StagedUpload:
    """The staged upload minus some columns, as a derived Parquet file (dtypes kept).

    The derived file is what gets stored and run, so the engine sees exactly the columns the
    user kept; its content hash differs from the original's, so a run on the full file and a
    run on the reduced one never share a dataset key.
    """
    if not drop:
        return staged
    if staged.frame is None:
        raise ValueError(f"upload {staged.filename!r} has errors: {staged.errors!r}")
    return drop_columns(staged.frame, drop, staged.filename, db_path=db_path)


def drop_columns(frame: pd.DataFrame, drop, filename: str, *, db_path: Path | str | None = None,
                 option: str | None = None) -> StagedUpload:
    """``frame`` (read from ``filename``) minus the columns ``drop``, staged as a derived Parquet
    upload named after the file: the one mechanism of the Run page's "Columns to leave out" and
    the command line's ``--drop-columns`` (``option``, which the error names).

    Raises
    ------
    ValueError
        If ``drop`` names a column the file lacks (the error names them and the file's columns).
    """
    unknown = [c for c in drop if c not in frame.columns]
    if unknown:
        columns = ", ".join(repr(str(c)) for c in list(frame.columns)[:50])
        asked = f"{option} names columns" if option else "cannot drop columns"
        raise ValueError(f"{asked} absent from file {Path(filename).name!r}: got "
                         f"{', '.join(map(repr, unknown))}; its columns are {columns}")
    buffer = io.BytesIO()
    frame.drop(columns=list(drop)).to_parquet(buffer, index=False)
    stem = Path(filename).name
    stem = stem[: -len(_suffixes(stem))] if _suffixes(stem) else stem
    return stage_upload(buffer.getvalue(), f"{stem}.parquet", max_bytes=None, db_path=db_path)


def store_upload(staged: StagedUpload, db_path: Path | str | None = None) -> Path:
    """Keep a validated upload under ``uploads/`` by content hash (idempotent); return its path.

    Uploads may hold private data: the file is readable by this user only (0600), in a
    directory only this user can list or enter (0700); both are tightened if they exist looser.
    """
    if not staged.ok or staged.path is None:
        raise ValueError(f"upload {staged.filename!r} has errors and cannot be stored: {staged.errors!r}")
    target_dir = upload_dir(db_path)
    target_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if stat.S_IMODE(target_dir.stat().st_mode) != 0o700:
        os.chmod(target_dir, 0o700)
    final = target_dir / staged.path.name
    if not final.exists():
        tmp = target_dir / f".{final.name}.tmp"
        shutil.copyfile(staged.path, tmp)
        os.chmod(tmp, 0o600)
        os.replace(tmp, final)
    elif stat.S_IMODE(final.stat().st_mode) != 0o600:
        os.chmod(final, 0o600)
    return final


def queue_upload_run(staged: StagedUpload, *, target: str, positive_class=None,
                     categorical: list[str] | None = None, drop: list[str] | None = None,
                     encoders, models, scorings, tuning: str, n_folds: int = Grid.n_folds,
                     timeout: float = 600.0, db_path: Path | str | None = None,
                     workers: int = 1, split: str = "cv", gap: int = 0, custom_encoders=(),
                     owner: str | None = None, task: str | None = "binary") -> Grid:
    """Validate, store and queue a run of the chosen grid on a staged upload; return the grid.

    ``drop`` lists columns to leave out (e.g. ID-like or leaking ones); the run then uses a
    derived copy of the file without them (:func:`without_columns`). ``split`` and ``gap`` are
    those of :class:`~encbench.engine.grid.Grid` (``'cv'``, ``'cv:COLUMN'``, ``'time:COLUMN'``);
    a time split's column is checked here, before anything is stored. ``custom_encoders`` are
    installed plugins (:func:`encbench.custom.plugins`) to run besides ``encoders``; ``owner``
    is the asking app session's token (:class:`~encbench.engine.queue_requests.RunRequest`);
    ``task`` the task type (binary by default, as the app's; None: inferred from the target).

    Raises
    ------
    DatasetError
        If the upload does not validate for these choices (nothing is stored or queued).
    ValueError
        If a custom encoder is not an installed plugin (nothing is stored, queued or imported).
    """
    problems = custom_encoder_problems(custom_encoders)  # before anything is written or imported
    if problems:
        raise ValueError("; ".join(problems))
    label = f"{Path(staged.filename).name}: {target}" + (f" (without {', '.join(drop)})" if drop else "")
    name = Path(staged.filename).name
    staged = without_columns(staged, list(drop or []), db_path=db_path)
    report = check_upload(staged, target, positive_class, categorical=categorical, n_folds=n_folds,
                          task=task)
    if report.errors:
        raise DatasetError(report.errors, headline=f"upload {staged.filename!r} cannot be used")
    spec_split = parse_split(split)
    if spec_split.kind == "time":
        try:
            times = check_time_column(staged.frame.drop(columns=[target]), spec_split.column)
        except ValueError as exc:
            raise DatasetError([str(exc)], headline=f"upload {staged.filename!r} cannot be split in time") from None
        y = staged.frame[target].astype(str).to_numpy()
        problems = check_forward_folds(times, y, n_folds, gap=gap)
        if problems:
            raise DatasetError(problems, headline=f"upload {staged.filename!r} cannot be split in time")
        label += f" [time split on {spec_split.column}]"
    stored = store_upload(staged, db_path)
    spec = str(stored)
    options = {"target": target, "positive_class": None if positive_class is None else str(positive_class),
               "categorical": categorical, "name": name,
               # a binary upload's options (and run id) stay as they were: its target infers binary
               **({"task": task} if task not in (None, "binary") else {})}
    grid = Grid(datasets=[spec], encoders=encoders, models=models, scorings=scorings, tuning=tuning,
                n_folds=n_folds, timeout=timeout, label=label, dataset_options={spec: options},
                split=split, gap=gap, custom_encoders=list(custom_encoders))
    # a plugin failing its pre-run check is refused here, with the reason
    RunRequest(grid, workers=workers, owner=owner).checked().submit(RunQueue(db_path))
    return grid
