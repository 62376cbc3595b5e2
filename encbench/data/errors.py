"""The one exception type of the dataset layer, and how its messages list names."""
from __future__ import annotations

from collections.abc import Sequence

#: names a message lists before it says how many more there are
MAX_LISTED = 10


def listed_names(values: Sequence, limit: int = MAX_LISTED) -> str:
    """``values`` quoted and comma separated, the first ``limit`` of them then a count of the rest."""
    values = list(values)
    text = ", ".join(repr(v) for v in values[:limit])
    if len(values) > limit:
        text += f", ... ({len(values) - limit} more)"
    return text


class DatasetError(ValueError):
    """A dataset cannot be read, fetched or used for the benchmark.

    The message names the file, column or value at fault. When several problems were found
    (validation), all of them are in :attr:`errors` and listed in the message, one per line.

    Parameters
    ----------
    errors : str or sequence of str
        One message, or every message found.
    line : int, optional
        1-based line of the file where parsing gave up, when that is known (CSV, ARFF).
    headline : str, optional
        First line of the message when there are several errors.
    """

    def __init__(self, errors: str | Sequence[str], *, line: int | None = None,
                 headline: str | None = None) -> None:
        self.errors: list[str] = [errors] if isinstance(errors, str) else list(errors)
        self.line = line
        if len(self.errors) == 1 and headline is None:
            message = self.errors[0]
        else:
            head = headline or f"{len(self.errors)} problems"
            message = head + ":\n" + "\n".join(f"- {e}" for e in self.errors)
        super().__init__(message)
