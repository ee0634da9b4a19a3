"""SR-1: the secret-redaction chokepoint.

Every write of content goes through :func:`write_redacted`: each secret value registered
for the run is replaced by ``[REDACTED:<secretId>]``. The reference rules:

- literal substring matching, never regex (a secret value cannot trigger ReDoS, and
  ``.*`` in a password means a dot and a star);
- longest secret first: a longer secret containing a shorter one is redacted whole;
- values shorter than ``MIN_SECRET_LENGTH`` (8 code points) are ignored, not redacted;
- per-run registries (:class:`RunSecretRegistries`) that die with the run.

How it works
------------
One Aho-Corasick automaton (pyahocorasick) holds every value, so finding all occurrences
of 1,000 secrets costs one C pass over the text. Occurrences that overlap are merged into
one span, replaced by one marker named after the longest secret in it (ties: leftmost).
Merging rather than picking a leftmost-longest non-overlapping subset matters for
overlapping secrets: for ``abcdefgh`` and ``efghijklmnop`` in ``abcdefghijklmnop``
leftmost-longest would redact the first and leave ``ijklmnop`` (two thirds of the other
secret) in plain text; the merged span leaves nothing. When no occurrences overlap (the
realistic case) the result is exactly the naive "sort by length, ``str.replace`` each".
(pyahocorasick's own ``iter_long`` is not used: it has known wrong results, upstream
issues #133, #185, #189.) The output is then verified by scanning only the windows of
``longest - 1`` characters around each marker, which step 2 below shows is complete:
a few hundred characters per isolated secret, at most one more pass when they are dense.

Why nothing survives (the proof the tests exercise)
---------------------------------------------------
Let T be the input and O the output: T with some disjoint spans replaced by markers.

1. Coverage: every occurrence of a secret in T lies inside a span. True for the first
   spans (all occurrences, merged); spans only grow and merge afterwards.
2. So an occurrence in O cannot lie in plain text between markers (it would be an
   occurrence in T outside every span): it overlaps a marker. If it contains neither the
   marker's ``[`` nor its ``]``, it lies inside the marker; ``register()`` refuses any
   value that occurs inside the marker of a registered secretId (such a marker would
   itself store the secret). Hence a surviving occurrence must contain ``[`` or ``]``
   taken from a marker: a secret "re-formed" across a marker boundary, e.g. the value
   ``k]abcdefg`` where ``XXXXXXXX`` with id ``k`` precedes ``abcdefg``. Without brackets
   in any value, one pass is final; the verifying scan of O then always comes back empty.
3. Settling: each occurrence found in O is mapped back to T (a marker character maps to
   its whole span) and merged into the spans. The pair (characters of T not covered by
   a span, number of spans) then strictly decreases in lexicographic order: an
   occurrence holding a plain character covers it; one made only of marker characters
   touches at least two markers (by 2.), and their spans merge into one. The pair cannot
   go below (0, 0), so settling ends after at most ``len(T) + spans`` merges, with no
   occurrence left in O. In pathological text this over-redacts the characters that
   re-formed the secret (they join the span), never under-redacts.
4. Locality: an occurrence overlapping a marker lies within ``longest - 1`` characters
   of it, so scanning those windows finds every occurrence (by 2.). After a merge, an
   occurrence in the new O that overlaps no changed marker was already in the previous O
   and was merged then, so only the windows of changed markers are re-scanned.
   Adversarial cascades (``A]xxxxxx`` followed by a long run of ``x``) cost O(len(T))
   small scans, not O(len(T)) full passes.

The guard in :meth:`_Plan.absorb` re-checks the decrease and refuses the write
(:class:`UnredactableContent`) instead of looping if the precondition of 2. were ever
broken; after settling, the whole output is scanned once more before it is returned.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

import ahocorasick

from schemas.errors import ErrorCode, InvalidInput

MIN_SECRET_LENGTH = 8
MARKER_PREFIX = "[REDACTED:"
MARKER_SUFFIX = "]"
SECRET_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
_SECRET_ID = re.compile(SECRET_ID_PATTERN)

# Error rules. They name the field and the rule and never echo the value (nor the
# secretId: a caller that swapped the arguments would otherwise log the secret).
_RULE_SECRET_ID = f"must match {SECRET_ID_PATTERN}"
_RULE_VALUE_TYPE = "must be a string"
_RULE_VALUE_MARKER = f"must not contain the redaction marker text {MARKER_PREFIX!r}"
_RULE_VALUE_INSIDE_MARKER = "must not occur inside the redaction marker of a registered secretId"
_RULE_MARKER_HOLDS_VALUE = "its redaction marker must not contain a registered secret value"


def marker(secret_id: str) -> str:
    """The text that replaces a secret: ``[REDACTED:<secretId>]``."""
    return f"{MARKER_PREFIX}{secret_id}{MARKER_SUFFIX}"


class InvalidSecret(InvalidInput):
    """A secret could not be registered; the message never contains the value."""

    code = ErrorCode.INVALID_SECRET


class UnredactableContent(InvalidInput):
    """Redaction could not be proven complete: refuse the write rather than store a secret.

    Unreachable while register()'s rules hold (see the module docstring); kept so that a
    broken precondition fails closed instead of looping or leaking.
    """

    code = ErrorCode.UNREDACTABLE_CONTENT

    def __init__(self) -> None:
        super().__init__("content", "registered secrets could not be redacted; write refused")


class Redaction(NamedTuple):
    """One replaced span of the input: ``text[start:stop]`` became ``marker(secret_id)``."""

    start: int
    stop: int
    secret_id: str


class _Span(NamedTuple):
    """A span of the input to replace, and the secret that names its marker.

    ``weight`` is that secret's length and ``origin`` the start of its occurrence: the
    longest secret in a span names it, the leftmost one among equals.
    """

    start: int
    stop: int
    secret_id: str
    weight: int
    origin: int

    def outranks(self, other: _Span) -> bool:
        return (self.weight, -self.origin) > (other.weight, -other.origin)


def _joined(spans: Iterable[_Span], start: int, stop: int) -> _Span:
    """One span over [start, stop) named by the best-ranked of ``spans`` (non-empty)."""
    best: _Span | None = None
    for span in spans:
        if best is None or span.outranks(best):
            best = span
    assert best is not None
    return _Span(start, stop, best.secret_id, best.weight, best.origin)


_Occurrence = tuple[int, int, str, int]  # start, stop, secret_id, length


def _occurrences(automaton: Any, text: str) -> list[_Occurrence]:
    """Every occurrence of every secret (overlapping ones included), by end position."""
    found = [
        (end + 1 - length, end + 1, secret_id, length)
        for end, (secret_id, length) in automaton.iter(text)
    ]
    found.sort(key=itemgetter(1))  # already ordered by pyahocorasick; cheap insurance
    return found


def _cover(found: list[_Occurrence]) -> list[_Span]:
    """Merge overlapping occurrences (sorted by stop) into disjoint, sorted spans.

    Occurrences that only touch stay separate: ``<secret><secret>`` gives two markers.
    """
    spans: list[_Span] = []
    for start, stop, secret_id, length in found:
        span = _Span(start, stop, secret_id, length, start)
        while spans and spans[-1].stop > span.start:
            previous = spans.pop()
            span = _joined((previous, span), min(previous.start, span.start), span.stop)
        spans.append(span)
    return spans


@dataclass(frozen=True, slots=True)
class _Compiled:
    """An immutable snapshot of a registry: safe to use while others register."""

    automaton: Any  # ahocorasick.Automaton: words are values, payloads (secretId, length)
    markers: Mapping[str, str]
    reach: int  # longest value - 1: how far past a marker a re-formed secret can reach

    def contains_secret(self, text: str) -> bool:
        return next(iter(self.automaton.iter(text)), None) is not None


class _Plan:
    """The spans of one input, and the settling loop of steps 3-4 in the module docstring."""

    def __init__(self, text: str, compiled: _Compiled, spans: list[_Span]) -> None:
        self.text = text
        self.compiled = compiled
        self.spans = spans
        self.covered = sum(span.stop - span.start for span in spans)

    def render(self, lo: int = 0, hi: int | None = None) -> tuple[str, list[tuple[int, int]]]:
        """Output for input range [lo, hi) (which must not cut a span), and its pieces as
        (output offset, ref): ref is a span index, or ``-1 - p`` for plain text that
        starts at input position p."""
        hi = len(self.text) if hi is None else hi
        first = bisect_left(self.spans, lo, key=attrgetter("start"))
        last = bisect_left(self.spans, hi, key=attrgetter("start"))
        out: list[str] = []
        pieces: list[tuple[int, int]] = []
        offset, cursor = 0, lo
        for index in range(first, last):
            span = self.spans[index]
            if span.start > cursor:
                pieces.append((offset, -1 - cursor))  # plain text from input ``cursor``
                out.append(self.text[cursor : span.start])
                offset += span.start - cursor
            pieces.append((offset, index))
            label = self.compiled.markers[span.secret_id]
            out.append(label)
            offset += len(label)
            cursor = span.stop
        if hi > cursor:
            pieces.append((offset, -1 - cursor))
            out.append(self.text[cursor:hi])
        return "".join(out), pieces

    def found_in(self, rendered: str, pieces: list[tuple[int, int]]) -> list[_Occurrence]:
        """Occurrences in rendered output, mapped back to input ranges (a marker
        character stands for its whole span)."""
        offsets = [offset for offset, _ in pieces]
        mapped: list[_Occurrence] = []
        for start, stop, secret_id, length in _occurrences(self.compiled.automaton, rendered):
            first = self._to_input(pieces, offsets, start, at_end=False)
            last = self._to_input(pieces, offsets, stop - 1, at_end=True)
            mapped.append((first, last, secret_id, length))
        return mapped

    def _to_input(
        self, pieces: list[tuple[int, int]], offsets: list[int], position: int, *, at_end: bool
    ) -> int:
        offset, ref = pieces[bisect_right(offsets, position) - 1]
        if ref >= 0:
            span = self.spans[ref]
            return span.stop if at_end else span.start
        return -1 - ref + (position - offset) + (1 if at_end else 0)

    def absorb(self, found: list[_Occurrence]) -> list[int]:
        """Merge occurrences into the spans; returns the starts of the changed spans."""
        before = (len(self.text) - self.covered, len(self.spans))
        changed: list[int] = []
        for start, stop, secret_id, length in found:
            lo = bisect_right(self.spans, start, key=attrgetter("stop"))
            hi = bisect_left(self.spans, stop, key=attrgetter("start"))
            merged = self.spans[lo:hi]
            if merged:
                new_start, new_stop = min(start, merged[0].start), max(stop, merged[-1].stop)
                span = _joined(merged, new_start, new_stop)
            else:  # plain text only: impossible by coverage, handled anyway
                span = _Span(start, stop, secret_id, length, start)
            self.covered += (span.stop - span.start) - sum(m.stop - m.start for m in merged)
            self.spans[lo:hi] = [span]
            changed.append(span.start)
        if found and (len(self.text) - self.covered, len(self.spans)) >= before:
            raise UnredactableContent()  # no progress: a precondition of the proof broke
        return changed

    def window(self, index: int) -> tuple[int, int]:
        """Input range whose rendering extends ``reach`` output characters each side of
        span ``index``'s marker (or to the ends of the text)."""
        markers, spans, reach = self.compiled.markers, self.spans, self.compiled.reach
        lo, need, left = spans[index].start, reach, index - 1
        while need > 0 and lo > 0:
            floor = spans[left].stop if left >= 0 else 0
            if lo - floor >= need:
                lo -= need
                break
            need -= lo - floor
            lo = floor
            if left >= 0:
                need -= len(markers[spans[left].secret_id])
                lo = spans[left].start
                left -= 1
        hi, need, right = spans[index].stop, reach, index + 1
        while need > 0 and hi < len(self.text):
            ceiling = spans[right].start if right < len(spans) else len(self.text)
            if ceiling - hi >= need:
                hi += need
                break
            need -= ceiling - hi
            hi = ceiling
            if right < len(spans):
                need -= len(markers[spans[right].secret_id])
                hi = spans[right].stop
                right += 1
        return lo, hi

    def around(self, indices: Iterable[int]) -> list[_Occurrence]:
        """Occurrences in the output near the markers of the spans at ``indices``
        (ascending). By step 2 nothing can be anywhere else, so this is the verifying
        scan: the windows of nearby markers are merged, which makes it one small scan
        per isolated secret and at most one pass over the output when they are dense."""
        windows: list[tuple[int, int]] = []
        for index in indices:
            lo, hi = self.window(index)
            if windows and lo <= windows[-1][1]:
                windows[-1] = (windows[-1][0], max(hi, windows[-1][1]))
            else:
                windows.append((lo, hi))
        found: list[_Occurrence] = []
        for lo, hi in windows:
            found += self.found_in(*self.render(lo, hi))
        return found

    def settle(self, dirty: list[int]) -> None:
        """Re-scan around changed spans until no secret is re-formed (steps 3-4)."""
        while dirty:
            start = dirty.pop()
            index = bisect_left(self.spans, start, key=attrgetter("start"))
            if index == len(self.spans) or self.spans[index].start != start:
                continue  # merged into a span that is queued itself
            dirty.extend(self.absorb(self.around([index])))


def _redact(text: str, compiled: _Compiled) -> tuple[list[_Span], str]:
    """The spans to replace and the redacted text (``text`` itself when nothing matched)."""
    plan = _Plan(text, compiled, _cover(_occurrences(compiled.automaton, text)))
    if not plan.spans:
        return plan.spans, text
    found = plan.around(range(len(plan.spans)))
    if found:
        plan.settle(plan.absorb(found))
    rendered, _ = plan.render()
    if found and compiled.contains_secret(rendered):  # proven impossible; fail closed
        raise UnredactableContent()
    return plan.spans, rendered


class MemorySecretRegistry:
    """The secrets resolved for one run (BYOK vault values at user/tenant/run scope).

    Thread-safe: registration swaps in a new automaton lazily; redaction works on an
    immutable snapshot. ``repr()`` shows the run and the count, never a value.
    """

    def __init__(self, run_id: str = "") -> None:
        self.run_id = run_id
        self._lock = threading.Lock()
        self._values: dict[str, str] = {}  # secretId -> value
        self._compiled: _Compiled | None = None
        # Indexes that keep register()'s marker checks O(marker length), not
        # O(registered secrets): a value's first 8 characters -> ids, and every 8-character
        # window of every marker -> ids (a value of 8+ characters inside a marker must
        # start at one of its windows).
        self._by_head: dict[str, set[str]] = {}
        self._by_marker_window: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"MemorySecretRegistry(run_id={self.run_id!r}, secrets={len(self._values)})"

    @property
    def secret_ids(self) -> tuple[str, ...]:
        return tuple(sorted(self._values))

    def register(self, secret_id: str, value: str) -> bool:
        """Register (or replace) a secret; False, and ignored, below ``MIN_SECRET_LENGTH``.

        A short replacement leaves an earlier value of the same id registered: redacting
        a rotated-out secret costs nothing, forgetting it could leak it. Raises
        :class:`InvalidSecret` (a ValueError) for a malformed secretId, for a value that
        contains marker text, and for a value and marker that would contain one another:
        a marker holding a secret would store that secret in every redacted write.
        """
        if not isinstance(secret_id, str) or not _SECRET_ID.fullmatch(secret_id):
            raise InvalidSecret("secretId", _RULE_SECRET_ID)
        if not isinstance(value, str):
            raise InvalidSecret("value", _RULE_VALUE_TYPE)
        if len(value) < MIN_SECRET_LENGTH:
            return False
        if MARKER_PREFIX in value:
            raise InvalidSecret("value", _RULE_VALUE_MARKER)
        with self._lock:
            self._refuse_marker_collisions(secret_id, value)
            self._store(secret_id, value)
        return True

    def _refuse_marker_collisions(self, secret_id: str, value: str) -> None:
        own = marker(secret_id)
        holders = self._by_marker_window.get(value[:MIN_SECRET_LENGTH], ())
        if value in own or any(value in marker(holder) for holder in holders):
            raise InvalidSecret("value", _RULE_VALUE_INSIDE_MARKER)
        if secret_id in self._values:
            return  # its marker was checked against every value when it was new
        for position in range(len(own) - MIN_SECRET_LENGTH + 1):
            for other in self._by_head.get(own[position : position + MIN_SECRET_LENGTH], ()):
                if own.startswith(self._values[other], position):
                    raise InvalidSecret("secretId", _RULE_MARKER_HOLDS_VALUE)

    def _store(self, secret_id: str, value: str) -> None:
        previous = self._values.get(secret_id)
        if previous is None:
            own = marker(secret_id)
            for position in range(len(own) - MIN_SECRET_LENGTH + 1):
                window = own[position : position + MIN_SECRET_LENGTH]
                self._by_marker_window.setdefault(window, set()).add(secret_id)
        else:
            self._by_head[previous[:MIN_SECRET_LENGTH]].discard(secret_id)
        self._by_head.setdefault(value[:MIN_SECRET_LENGTH], set()).add(secret_id)
        self._values[secret_id] = value
        self._compiled = None

    def _snapshot(self) -> _Compiled | None:
        with self._lock:
            if self._compiled is None and self._values:
                self._compiled = self._compile()
            return self._compiled

    def _compile(self) -> _Compiled:
        # Two ids may share a value: the lexically first names it, stably.
        names: dict[str, str] = {}
        for secret_id, value in sorted(self._values.items()):
            names.setdefault(value, secret_id)
        automaton = ahocorasick.Automaton()
        for value, secret_id in names.items():
            automaton.add_word(value, (secret_id, len(value)))
        automaton.make_automaton()
        return _Compiled(
            automaton=automaton,
            markers={secret_id: marker(secret_id) for secret_id in self._values},
            reach=max(map(len, names)) - 1,
        )

    def contains_secret(self, text: str) -> bool:
        """Whether any registered value occurs in ``text``."""
        compiled = self._snapshot()
        return compiled is not None and bool(text) and compiled.contains_secret(text)

    def redactions(self, text: str) -> list[Redaction]:
        """The spans of ``text`` that :meth:`redact` replaces, in order (no values)."""
        compiled = self._snapshot()
        if compiled is None or not text:
            return []
        spans, _ = _redact(text, compiled)
        return [Redaction(span.start, span.stop, span.secret_id) for span in spans]

    def redact(self, text: str) -> str:
        """``text`` with every registered secret replaced by its marker.

        Guarantee: no registered value occurs in the result (module docstring).
        """
        compiled = self._snapshot()
        if compiled is None or not text:
            return text
        return _redact(text, compiled)[1]


def write_redacted(content: str, secrets: MemorySecretRegistry | None) -> str:
    """THE chokepoint: every write path of the store passes content through here."""
    return content if secrets is None else secrets.redact(content)


class RunSecretRegistries:
    """Process-wide per-run registries, keyed by run id; discard when the run ends."""

    def __init__(self) -> None:
        self._registries: dict[str, MemorySecretRegistry] = {}
        self._lock = threading.Lock()

    def for_run(self, run_id: str) -> MemorySecretRegistry:
        """The run's registry, created empty on first use."""
        with self._lock:
            registry = self._registries.get(run_id)
            if registry is None:
                registry = self._registries[run_id] = MemorySecretRegistry(run_id)
            return registry

    def discard(self, run_id: str) -> None:
        """Forget the run's secrets (idempotent)."""
        with self._lock:
            self._registries.pop(run_id, None)

    def __contains__(self, run_id: object) -> bool:
        with self._lock:
            return run_id in self._registries

    def __len__(self) -> int:
        with self._lock:
            return len(self._registries)
