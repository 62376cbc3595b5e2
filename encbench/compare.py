"""Rank encoders on one dataset of the user's and set the ranking beside the published consensus."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from encbench import vocab
from encbench.stats import consensus, jaccard_best, spearman

FACTORS = ("model", "tuning", "scoring")


@dataclass(frozen=True)
class Comparison:
    """One (model, tuning, scoring): the user's ranking next to the published consensus.

    Attributes
    ----------
    table
        One row per encoder run on the user's data: ``encoder, cv_score, rank`` (dense, 1 = best
        on the user's dataset) and ``published_rank`` (the published consensus restricted to the
        same encoders and re-ranked densely; NaN when the study has no result for it).
    rho, jaccard
        Spearman rho and Jaccard index of the rank-1 sets between the two rankings over the
        encoders both hold (None when fewer than two encoders are shared).
    n_published_datasets
        How many published datasets the consensus aggregates (0 = none for these factors).
    """

    model: str
    tuning: str
    scoring: str
    strategy: str
    table: pd.DataFrame
    rho: float | None
    jaccard: float | None
    n_published_datasets: int
    summary: str


def _vocab_order(key: tuple[str, str, str]) -> tuple:
    orders = (vocab.MODELS, vocab.TUNINGS, vocab.METRICS)
    return tuple(order.index(v) if v in order else len(order) for v, order in zip(key, orders)) + key


def _dense_rank(values: pd.Series) -> pd.Series:
    return values.rank(method="dense").astype(int)


def _names(encoders) -> str:
    encoders = list(encoders)
    return ", ".join(encoders[:4]) + (f" and {len(encoders) - 4} more" if len(encoders) > 4 else "")


def compare_with_published(local: pd.DataFrame, published: pd.DataFrame, *,
                           strategy: str = "R-M") -> list[Comparison]:
    """Compare per-encoder scores on one user dataset with the published consensus.

    Parameters
    ----------
    local
        ``scores`` rows of the user's run on ONE dataset: columns ``model, tuning, scoring,
        encoder, cv_score`` (``dataset`` optional).
    published
        Published ``scores`` rows (columns ``dataset, model, tuning, scoring, encoder, cv_score``).
    strategy
        Consensus strategy for the published side (default: mean rank, R-M).
    """
    needed = set(FACTORS) | {"encoder", "cv_score"}
    missing = needed - set(local.columns)
    if missing:
        raise ValueError(f"local scores lack columns {sorted(missing)!r}")
    if "dataset" in local.columns and local["dataset"].nunique() > 1:
        raise ValueError(f"local scores must hold one dataset: got {sorted(local['dataset'].unique())!r}")
    comparisons = []
    # in vocabulary order (models, then tuning, then metrics), as everywhere in the app
    groups = sorted(local.groupby(list(FACTORS)), key=lambda item: _vocab_order(item[0]))
    for (model, tuning, scoring), mine in groups:
        mine = mine.groupby("encoder", as_index=False)["cv_score"].mean()
        mine["rank"] = _dense_rank(-mine["cv_score"])
        theirs = published[(published["model"] == model) & (published["tuning"] == tuning)
                           & (published["scoring"] == scoring)
                           & published["encoder"].isin(mine["encoder"])]
        n_datasets = int(theirs["dataset"].nunique())
        table = mine.sort_values(["rank", "encoder"]).reset_index(drop=True)
        rho = jac = None
        if n_datasets:
            cons = consensus(theirs[["dataset", "encoder", "cv_score"]], strategy)
            table["published_rank"] = table["encoder"].map(_dense_rank(cons)).astype("Int64")
            shared = table.dropna(subset=["published_rank"])
            if len(shared) >= 2:
                ours = shared.set_index("encoder")["rank"]
                pub = _dense_rank(shared.set_index("encoder")["published_rank"].astype(float))
                rho = float(spearman(ours, pub))
                jac = float(jaccard_best(ours, pub))
        else:
            table["published_rank"] = pd.Series(pd.NA, index=table.index, dtype="Int64")
        comparisons.append(Comparison(model, tuning, scoring, strategy, table, rho, jac, n_datasets,
                                      _summary(model, tuning, scoring, strategy, table, rho, jac, n_datasets)))
    return comparisons


def _summary(model, tuning, scoring, strategy, table, rho, jac, n_datasets) -> str:
    best = table[table["rank"] == 1]
    text = (f"On your data the best encoder{'s' if len(best) > 1 else ''} for {model}/{scoring} "
            f"({tuning} tuning) {'were' if len(best) > 1 else 'was'} {_names(best['encoder'])} "
            f"(score {best['cv_score'].iloc[0]:.4f}).")
    if not n_datasets:
        return text + " The published benchmark has no results for these factors."
    pub_best = table[table["published_rank"] == 1]["encoder"]
    text += (f" Among the same encoders, the published consensus ({strategy} over {n_datasets} "
             f"datasets) recommends {_names(pub_best)}.")
    if rho is not None:
        text += f" Agreement: Spearman rho {rho:.2f}, Jaccard of best sets {jac:.2f}."
    return text
