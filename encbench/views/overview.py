"""The Overview page: what a view counts, its datasets, the headline consensus."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd

from encbench import stats
from encbench.views.consensus import oriented, pool_combinations
from encbench.views.labels import encoder_families
from encbench.vocab import ordered


@dataclass(frozen=True)
class ScoreCounts:
    """What a view's collapsed scores hold: distinct datasets, encoders, models, scorings and
    tunings, ``results`` (score rows) and ``runs`` (the runs its scores come from)."""

    datasets: int
    encoders: int
    models: int
    scorings: int
    tunings: int
    results: int
    runs: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def score_counts(scores: pd.DataFrame) -> ScoreCounts:
    """Datasets, encoders, models, scorings, tunings, results (rows) and runs of collapsed scores."""
    return ScoreCounts(datasets=int(scores["dataset"].nunique()), encoders=int(scores["encoder"].nunique()),
                       models=int(scores["model"].nunique()), scorings=int(scores["scoring"].nunique()),
                       tunings=int(scores["tuning"].nunique()), results=int(len(scores)),
                       runs=_runs(scores))


def _runs(scores: pd.DataFrame) -> int:
    """Runs behind collapsed scores (an experiment several runs hold names them joined by commas)."""
    if "run_id" not in scores.columns or not len(scores):
        return 0
    return len({r for joined in scores["run_id"].astype(str).unique() for r in joined.split(",")})


def datasets_in_view(datasets: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``datasets`` that ``scores`` (a view's collapsed scores) has results for, in
    the order of ``datasets``, with ``results`` = the view's score rows of each.

    A view's dataset list must count what the view counts: not datasets of other origins, and
    not a local re-run of a published experiment a second time.

    Examples
    --------
    >>> datasets = pd.DataFrame({"dataset": ["31", "50", "file:ab"], "results": [9, 9, 9]})
    >>> scores = pd.DataFrame({"dataset": ["50", "31", "50"]})
    >>> datasets_in_view(datasets, scores)[["dataset", "results"]].values.tolist()
    [['31', 1], ['50', 2]]
    """
    counts = scores["dataset"].astype(str).value_counts()
    shown = datasets[datasets["dataset"].astype(str).isin(counts.index)].copy()
    shown["results"] = shown["dataset"].astype(str).map(counts).astype(int)
    return shown.reset_index(drop=True)


#: the Overview's headline strategy: a mean rank, which the headline table also shows
HEADLINE_STRATEGY = "R-M"


@dataclass(frozen=True)
class Headline:
    """The Overview's headline consensus: encoders ranked over the same voters.

    A mean rank over unequal voter sets compares encoders on different questions (in the
    published data WoE has 2,004 voters, OH 1,846, Sum 1,797; Native, beyond the study, only
    LightGBM's and HGB's). So the headline ranks over the voters (each (dataset, model, tuning,
    metric)) where every ranked encoder has a result; an encoder that alone would more than
    halve those voters is left out of it (:func:`comparable_voters`) and listed apart, with the
    voters it has.

    Attributes
    ----------
    table : pandas.DataFrame
        ``encoder, rank, mean_rank, n_voters, family``, best first; every row has the same
        ``n_voters`` (:attr:`n_voters`).
    left_out : pandas.DataFrame
        ``encoder, family, n_voters, mean_rank``: the encoders left out, with their mean rank
        over their own voters (among the encoders each of those has), fewest voters first.
    n_voters : int
        The voters the ranking uses.
    n_all_voters : int
        The voters of the view.
    """

    table: pd.DataFrame
    left_out: pd.DataFrame
    n_voters: int
    n_all_voters: int

    @property
    def best(self) -> list[str]:
        """The rank-1 encoders."""
        return self.table.loc[self.table["rank"] == 1, "encoder"].astype(str).tolist()

    @property
    def coverage_text(self) -> str:
        """What the means cover, in words (markdown)."""
        text = (f"each of the {len(self.table)} encoders over the same {self.n_voters:,} voters, the "
                f"(dataset, model, tuning, metric) where all of them have a result ({self.n_all_voters:,} "
                f"in the view)")
        if len(self.left_out):
            text += ("; left out as they have results on too few voters: "
                     + ", ".join(f"{e} ({n:,} voters)" for e, n in
                                 zip(self.left_out["encoder"], self.left_out["n_voters"])))
        return text


def comparable_voters(pooled: pd.DataFrame) -> tuple[list[str], pd.Index]:
    """The encoders to rank together and the voters where every one of them has a result.

    Starting from every encoder, the one with the fewest voters is left out while that at least
    doubles the voters all the others have (so one encoder run on few combinations, e.g. Native
    on two models, does not shrink the comparison to those); two encoders always stay.

    Parameters
    ----------
    pooled : pandas.DataFrame
        ``dataset`` (the voter) and ``encoder`` columns, one row per result.

    Returns
    -------
    (encoders, voters)
        The encoders kept, most voters first, and the voters where all of them have a result.

    Examples
    --------
    >>> rows = [(v, e) for v in "abcdef" for e in ("X", "Y")] + [("a", "Z")]
    >>> encoders, voters = comparable_voters(pd.DataFrame(rows, columns=["dataset", "encoder"]))
    >>> encoders, list(voters)
    (['Y', 'X'], ['a', 'b', 'c', 'd', 'e', 'f'])
    """
    present = pd.crosstab(pooled["dataset"], pooled["encoder"]) > 0
    counts = present.sum().sort_values(kind="stable")
    keep = list(counts.index)
    complete = present[keep].all(axis=1)
    for encoder in counts.index[:-2]:
        rest = [e for e in keep if e != encoder]
        without = present[rest].all(axis=1)
        if int(without.sum()) < max(2 * int(complete.sum()), 1):
            break
        keep, complete = rest, without
    return keep[::-1], present.index[complete.to_numpy()]


def headline_consensus(scores: pd.DataFrame) -> Headline:
    """:data:`HEADLINE_STRATEGY` (R-M) over everything: every (dataset, model, tuning, metric) is
    a voter, and the encoders are ranked over the voters they all have (:class:`Headline`).

    Scores of a lower-is-better metric are negated first (:func:`oriented`), so voters of
    several metrics (RMSE, MAE, R2) each rank their encoders best first.
    """
    pooled = oriented(pool_combinations(scores))
    encoders, voters = comparable_voters(pooled)
    shared = pooled[pooled["dataset"].isin(voters) & pooled["encoder"].isin(encoders)]
    ranking = stats.consensus(shared, HEADLINE_STRATEGY)
    per_encoder = stats.dataset_ranks(shared).groupby("encoder")["rank"].agg(mean_rank="mean", n_voters="size")
    out = ranking.rename("rank").to_frame().join(per_encoder).reset_index()
    out["family"] = encoder_families(out["encoder"]).to_numpy()
    table = out.sort_values(["rank", "encoder"], kind="stable").reset_index(drop=True)
    others = sorted(set(pooled["encoder"].astype(str)) - set(encoders))
    left = pd.DataFrame(columns=["encoder", "family", "n_voters", "mean_rank"])
    if others:
        ranks = stats.dataset_ranks(pooled)
        left = (ranks[ranks["encoder"].isin(others)].groupby("encoder")["rank"]
                .agg(n_voters="size", mean_rank="mean").reset_index())
        left.insert(1, "family", encoder_families(left["encoder"]).to_numpy())
        left = left.sort_values(["n_voters", "encoder"], kind="stable").reset_index(drop=True)
    return Headline(table=table, left_out=left, n_voters=int(len(voters)),
                    n_all_voters=int(pooled["dataset"].nunique()))


def counts_by_pair(scores: pd.DataFrame, x: str, color: str) -> pd.DataFrame:
    """Number of score rows per (x, color), both factors in vocabulary order."""
    counts = scores.groupby([x, color], observed=True).size().rename("results").reset_index()
    counts[x] = pd.Categorical(counts[x], ordered(x, counts[x]), ordered=True)
    counts[color] = pd.Categorical(counts[color], ordered(color, counts[color]), ordered=True)
    counts = counts.sort_values([x, color]).reset_index(drop=True)
    counts[x] = counts[x].astype(str)
    counts[color] = counts[color].astype(str)
    return counts


def task_holds(task: str, levels: dict) -> str:
    """What the database holds of ``task``, in one sentence (the Overview's caption): the
    published study (binary only), encbench's own benchmark on R datasets, local runs.

    ``levels`` maps a column (``origin``, ``dataset``) to the values the task's scores hold."""
    origins = set(levels.get("origin", []))
    datasets = len(levels.get("dataset", []))
    parts = []
    if "published" in origins:
        parts.append("the published study's results (Matteucci et al. 2023)")
    if "encbench" in origins:
        parts.append("encbench's own benchmark (R datasets, every encoder)" if task != "binary"
                     else "encbench's own results, added on request (the encoders beyond the study, "
                          "R datasets)")
    if "local" in origins:
        parts.append("your local runs")
    held = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else "nothing yet"
    return f"Shown: {TASK_WORDS.get(task, task)}, {datasets} dataset(s) with results: {held}."


#: a task in words a newcomer reads ("binary targets" said little)
TASK_WORDS = {"binary": "binary classification (a yes/no target)",
              "multiclass": "multiclass classification (a target of several classes)",
              "regression": "regression (a numeric target)"}
