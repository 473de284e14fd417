"""The one exception tiecore raises for bad input."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: which file, which line, what was wrong and what was expected.

    Parameters
    ----------
    source : str
        File name (or a description such as ``"run DataFrame"``).
    line : int or None
        1-based line number, when the problem sits on one line.
    problem : str
        What was wrong.
    expected : str, optional
        What was expected instead.

    Examples
    --------
    >>> str(InputError("run.txt", 3, "score 'abc' is not a number", "a finite number"))
    "run.txt, line 3: score 'abc' is not a number (expected a finite number)"
    """

    def __init__(
        self, source: str, line: int | None, problem: str, expected: str | None = None
    ) -> None:
        self.source = str(source)
        self.line = line
        self.problem = problem
        self.expected = expected
        where = self.source if line is None else f"{self.source}, line {line}"
        message = f"{where}: {problem}"
        if expected:
            message += f" (expected {expected})"
        super().__init__(message)

    def __reduce__(self) -> tuple:
        # Pickled by its fields (a dask worker's error reaches the client intact).
        return type(self), (self.source, self.line, self.problem, self.expected)


class Refusal(InputError):
    """Right input whose exact answer would pass a budget of time or memory (a tie group
    too large for an exact tie-aware value, too many samples): the message says what
    fits instead.  ``tiecore eval`` prints every other value and one line per refusal.
    """


class TieCoreWarning(UserWarning):
    """Something was skipped, such as run queries that have no judgments."""
