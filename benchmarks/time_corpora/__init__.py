"""Public time-expression corpora for the commitment-parser benchmark, one module each.

- ``ctparse_corpus``   ctparse's corpus (in the ctparse wheel)
- ``recurrent_corpus`` recurrent's test expressions (in the recurrent wheel)
- ``dateparser_tests`` dateparser 1.5.0's own test cases (sdist, fetched)
- ``timefhuman_tests`` timefhuman 0.1.4's end-to-end cases (sdist, fetched)

Each loader yields ``rows.Row`` (stable key, phrase, reference time, expectation or skip
reason); ``split`` assigns every row to the development or the test half, committed in
``split.json``; ``fetch`` downloads the sdists once. Only the development halves may be
looked at while tuning the grammar.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from benchmarks.time_corpora import (
    ctparse_corpus,
    dateparser_tests,
    recurrent_corpus,
    timefhuman_tests,
)
from benchmarks.time_corpora.rows import Row

Loader = Callable[[], Iterator[Row]]

# Shipped inside wheels installed with the ``bench`` extra: always available.
WHEEL_SHIPPED: dict[str, Loader] = {
    ctparse_corpus.NAME: ctparse_corpus.load,
    recurrent_corpus.NAME: recurrent_corpus.load,
}
# Read from sdists in .cache/time-corpora/ (python -m benchmarks.time_corpora.fetch).
FETCHED: dict[str, Loader] = {
    dateparser_tests.NAME: dateparser_tests.load,
    timefhuman_tests.NAME: timefhuman_tests.load,
}
CORPORA: dict[str, Loader] = {**WHEEL_SHIPPED, **FETCHED}
