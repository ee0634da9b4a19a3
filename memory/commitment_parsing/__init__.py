"""Commitment phrase parsing: the text of a memory entry in, a commitment spec out.

Pure: no database, no SQLAlchemy, no Temporal, nothing from ``memory.commitments``;
only ``schemas`` and dateutil. docs/time-grammar.md states the rules and lists the
reason and convention codes. Parses text and
computes instants:

- ``inference.infer_commitment``: the single entry point; an entry's text and tags ->
  a ``schemas.commitment_spec`` spec (once, recurring or predicate) plus a canonical
  condition string, or the reason there is none;
- ``phrasing``: is an entry a standing intention ("remind me ...", "follow up ..."),
  and which part of it says when;
- ``time_words`` (vocabulary), ``text_map`` (normalized text that maps back to the
  original offsets), ``time_pieces``, ``time_grammar``, ``time_positions``,
  ``time_numeric``, ``time_dates``, ``time_spoken`` and ``time_clocks`` (scanning),
  ``coverage`` (where a time phrase starts and ends; a word left unread refuses it),
  ``time_resolution`` (a scan -> one instant in an IANA zone): one-off times;
- ``conventions``: the tenant's ``ParsingConventions`` for what English leaves
  ambiguous (date order, two-digit years, zone abbreviations, "next <weekday>");
- ``recurrence_rules`` and ``recurrence_phrases``: recurring phrasings -> a
  ``RecurringSpec`` (an RRULE body over local wall-clock time);
- ``recurrence_dates``: a ``RecurringSpec`` and an instant -> its next occurrence
  (what the firing path in ``memory.commitments`` calls at run time);
- ``conditions``: "when <condition>" -> a ``PredicateSpec``;
- ``patterns``: the ordered pattern registry the grammars are built on.

Storage, inference over stored entries and firing are ``memory.commitments``.
"""
