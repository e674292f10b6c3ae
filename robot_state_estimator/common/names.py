"""Close names for "did you mean" hints: one rule for the node's unknown parameter overrides and replay's ``--set``.

The matching is ``difflib.get_close_matches`` (Ratcliff/Obershelp similarity, at least 0.6, at most 3 names, the
closest first), as the node has always used for its overrides.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

#: similarity (0..1) from which a known name is offered
CUTOFF = 0.6


def close_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The at most ``n`` names of ``known`` closest to ``name`` (similarity >= ``CUTOFF``), the closest first."""
    return difflib.get_close_matches(name, list(known), n=n, cutoff=CUTOFF)


def did_you_mean(close: Sequence[str]) -> str:
    """``" (did you mean 'a', 'b' or 'c'?)"`` for the names ``close`` (of :func:`close_names`); "" when empty."""
    if not close:
        return ""
    names = [repr(c) for c in close]
    alternatives = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    return f" (did you mean {alternatives}?)"


__all__ = ["CUTOFF", "close_names", "did_you_mean"]
