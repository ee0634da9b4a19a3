"""What consolidation reads from an entry's text: its normal form (for exact duplicates),
its content words (for near-duplicates), and the facts a merge must never blur (numbers,
identifiers, dates, negation, currencies, names), extracted once per entry.

Deterministic and locale-free: Unicode NFKC, case folding and the word lists below; no
model, no download. The lists are deliberately small: a word missing from STOPWORDS only
makes two texts look less alike (a missed merge), never more alike.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from memory.sameness.fillers import filler_end


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Function words and fillers whose presence does not change a fact ("Note: the user
# prefers X" restates "User prefers X"). Words that do change one (before/after, not,
# only, to, from, numbers) are not here.
STOPWORDS = _words(
    "a an the is are was were be been being am that this these those which who whom "
    "please note fyi btw also just really actually basically indeed remember reminder "
    "it its it's s there here so very quite currently now still and as per"
)
# Common typos of function words ("hte" for "the"): three letters, too short to be
# forgiven as a typo, and no content of their own.
FUNCTION_WORD_TYPOS = _words("hte teh taht thta adn nad")
_IGNORED = STOPWORDS | FUNCTION_WORD_TYPOS
NEGATIONS = _words("not no never none nobody nothing neither nor nowhere cannot without")
# Words that come and go with a negation ("does not like" / "likes").
NEGATION_COMPANIONS = NEGATIONS | _words(
    "t do does did don doesn didn isn aren wasn weren won wouldn shouldn couldn can"
)
_MONTHS = {
    "january": "jan", "february": "feb", "march": "mar", "april": "apr", "may": "may",
    "june": "jun", "july": "jul", "august": "aug", "september": "sep", "sept": "sep",
    "october": "oct", "november": "nov", "december": "dec",
}  # fmt: skip
_WEEKDAYS = {
    "monday": "mon", "tuesday": "tue", "wednesday": "wed", "thursday": "thu",
    "friday": "fri", "saturday": "sat", "sunday": "sun", "tues": "tue", "thur": "thu",
    "thurs": "thu",
}  # fmt: skip
_RELATIVE_TIME = _words(
    "today tomorrow yesterday tonight weekend weekday morning afternoon evening night "
    "noon midnight am pm daily weekly monthly yearly annually quarterly hourly"
)
DATE_WORDS: dict[str, str] = {
    **_MONTHS,
    **{short: short for short in _MONTHS.values() if short != "may"},
    **_WEEKDAYS,
    **{short: short for short in _WEEKDAYS.values()},
    **{word: word for word in _RELATIVE_TIME},
}
_SMALL_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
)
NUMBER_WORDS: dict[str, int] = {word: n for n, word in enumerate(_SMALL_NUMBERS.split())}
NUMBER_WORDS.update(
    {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80}
)
NUMBER_WORDS.update({"ninety": 90, "hundred": 100, "thousand": 1000, "million": 10**6})
NUMBER_WORDS.update({"billion": 10**9, "dozen": 12, "half": 0, "twice": 2, "once": 1})
ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "last": -1,
}  # fmt: skip
CURRENCY_CODES = frozenset(
    ["usd", "eur", "gbp", "jpy", "chf", "cad", "aud", "inr", "cny", "dollars", "euros", "pounds"]
)
_CURRENCY_SYMBOLS = frozenset("$€£¥₹₩₽%")

_THOUSANDS = re.compile(r"(?<=\d)[,_](?=\d{3}(?!\d))")
# A token: letters/digits, possibly joined by - . / : @ _ ' (identifiers, decimals,
# contractions, e-mail addresses and URLs stay whole).
_TOKEN = re.compile(r"[^\W_]+(?:['\u2019\-./:@_+#][^\W_]+)*")
_WORD = re.compile(r"[^\W_]+")
_PLAIN_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _clean(text: str) -> str:
    """NFKC, without format characters (zero-width spaces and joiners are invisible
    and would make two identical-looking texts differ)."""
    if text.isascii():
        return text  # NFKC leaves ASCII alone and it has no format characters
    nfkc = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in nfkc if unicodedata.category(ch) != "Cf")


def normal_form(text: str) -> str:
    """Exact-duplicate key: NFKC, case-folded, punctuation removed, whitespace collapsed."""
    return " ".join(word.casefold() for word in _WORD.findall(_THOUSANDS.sub("", _clean(text))))


def _number(token: str) -> str | None:
    if not _PLAIN_NUMBER.fullmatch(token):
        return None
    try:
        value = Decimal(token.replace(",", "."))
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        return None
    return format(value.normalize(), "f")


def _is_identifier(token: str) -> bool:
    """Version numbers, regions, ticket ids, addresses: digits mixed with letters or
    joined by punctuation, or internal capitals (camelCase, iPhone)."""
    has_digit = any(ch.isdigit() for ch in token)
    has_alpha = any(ch.isalpha() for ch in token)
    if has_digit:
        # v2, eu-west-1, INV2231, 10.0.0.1, 2026-11-23 (a plain number is read first)
        return has_alpha or any(ch in "-./:@_+#" for ch in token)
    # example.com, a@b.io, snake_case, C#; hyphenated words are words, and a camelCase
    # product name (HubSpot) is a name: recasing it must not make it another identifier.
    return any(ch in "./:@_+#" for ch in token)


@dataclass(frozen=True)
class FactText:
    normal: str
    # Content words (case-folded, stopwords removed), in order.
    words: tuple[str, ...]
    # The facts a merge must keep: compared for equality, in order.
    numbers: tuple[str, ...]
    identifiers: tuple[str, ...]
    dates: tuple[str, ...]
    currencies: frozenset[str]
    negations: int
    # Whether the text's capitals can be read (not all lower, all upper or Title Case).
    cased: bool
    # Capitalised words inside a sentence (names, places, products), case-folded, in
    # order, each once; empty when the text is not cased.
    names: tuple[str, ...]
    # The same with sentence-initial capitalised words too, which may be names or not.
    capitalised: tuple[str, ...]
    # Computed once, read for every candidate pair.
    word_set: frozenset[str]
    # Words that carry one of the guarded facts (names, dates, numbers, identifiers).
    fact_words: frozenset[str]
    # The parts of the identifiers ("eu", "west" of eu-west-1): never a typo.
    identifier_words: frozenset[str] = frozenset()
    # In a Title Case text (capitals that say nothing about names), the capitalised
    # words: any of them may be a name ("Syria" / "Saria").
    title_words: frozenset[str] = frozenset()
    # Words written all in lower case: whatever the text's case, not a name.
    lower_words: frozenset[str] = frozenset()


# Words that carry a guarded fact by themselves (dates, numbers, ordinals, currencies).
_FACT_WORDS = frozenset(DATE_WORDS) | NUMBER_WORDS.keys() | ORDINALS.keys() | CURRENCY_CODES


def _has_digit(word: str) -> bool:
    return any(ch.isdigit() for ch in word)


_NOT_NAMES = STOPWORDS | DATE_WORDS.keys() | NUMBER_WORDS.keys() | ORDINALS.keys() | CURRENCY_CODES


def _cased(tokens: list[tuple[str, bool]]) -> bool:
    """Whether capitals say anything: not when the text is all lower case, all upper
    case (no lower-case letter in any word of two letters or more: every word would
    read as a name), or Title Case (more than half of its words capitalised)."""
    alpha = [token for token, _ in tokens if token.isalpha()]
    capitalised = sum(1 for token in alpha if token[0].isupper())
    if not alpha or capitalised == 0:
        return False
    if all(token.isupper() for token in alpha if len(token) > 1):
        return False
    return capitalised * 2 <= len(alpha)


def _capitalised(tokens: list[tuple[str, bool]], *, inside_only: bool) -> tuple[str, ...]:
    """Capitalised words in order (case-folded, each once), fillers such as "FYI" left
    out; ``inside_only`` skips sentence-initial ones, which may be ordinary words."""
    found: dict[str, None] = {}
    for token, starts_sentence in tokens:
        if not token.isalpha() or not token[0].isupper() or token == "I":
            continue
        if inside_only and starts_sentence:
            continue
        folded = token.casefold()
        # Fillers are not names, and months, weekdays, number words and currency codes
        # are guarded as dates, numbers and amounts already.
        if folded not in _NOT_NAMES:
            found.setdefault(folded)
    return tuple(found)


_SENTENCE_MARK = re.compile(r"[.!?:;\n]")


def _tokens(cleaned: str, start: int = 0) -> list[tuple[str, bool]]:
    """Tokens from ``start`` on, with whether each starts a sentence: the first one of
    the text, or one after . ! ? : ; or a line break."""
    tokens: list[tuple[str, bool]] = []
    mark = _SENTENCE_MARK.search
    end = 0
    for match in _TOKEN.finditer(cleaned):
        begin = match.start()
        if begin >= start:
            # Searched in place: no slice of the gap for each token.
            tokens.append((match.group(), end == 0 or mark(cleaned, end, begin) is not None))
        end = match.end()
    return tokens


def read_fact_text(text: str) -> FactText:
    cleaned = _THOUSANDS.sub("", _clean(text))
    # The guard reads the whole text (tokens); the words compared and the names read
    # leave an opening filler out ("Per the latest update, ...": fillers.py).
    tokens = _tokens(cleaned)
    body_start = filler_end(cleaned)
    body = cleaned[body_start:]
    # A filler ends at a token boundary, so the body's tokens are the last ones (with
    # their place in the whole text: "To recap, Acme ..." keeps "Acme" inside a sentence).
    body_tokens = _tokens(cleaned, body_start) if body_start else tokens
    cased = _cased(body_tokens)
    numbers: list[str] = []
    identifiers: list[str] = []
    dates: list[str] = []
    negations = 0
    for token, _ in tokens:
        folded = token.casefold()
        if folded in NEGATIONS or folded.endswith(("n't", "n\u2019t")):
            negations += 1
        # Most tokens are plain words: nothing below but the date words reads them.
        if folded.isalpha() and folded not in NUMBER_WORDS and folded not in ORDINALS:
            if folded in DATE_WORDS:
                dates.append(DATE_WORDS[folded])
            continue
        number = _number(folded) if folded[0].isdigit() else None
        if number is not None:
            numbers.append(number)
        elif folded in NUMBER_WORDS:
            numbers.append(str(NUMBER_WORDS[folded]))
        elif folded in ORDINALS:
            numbers.append(f"#{ORDINALS[folded]}")
        elif _is_identifier(token):
            identifiers.append(folded)
        if folded in DATE_WORDS:
            dates.append(DATE_WORDS[folded])
    words = tuple(
        word for word in (w.casefold() for w in _WORD.findall(body)) if word not in _IGNORED
    )
    currencies = frozenset(ch for ch in cleaned if ch in _CURRENCY_SYMBOLS) | frozenset(
        w for w in words if w in CURRENCY_CODES
    )
    capitalised = _capitalised(body_tokens, inside_only=False) if cased else ()
    identifier_words = frozenset(w.casefold() for i in identifiers for w in _WORD.findall(i))
    fact_words = (
        frozenset(capitalised)
        | {w for w in words if w in _FACT_WORDS or (not w.isalpha() and _has_digit(w))}
        # The parts of an identifier ("eu", "north" of eu-north-1) carry it too.
        | identifier_words
    )
    return FactText(
        normal=" ".join(w.casefold() for w in _WORD.findall(cleaned)),
        words=words,
        numbers=tuple(numbers),
        identifiers=tuple(identifiers),
        dates=tuple(dates),
        currencies=currencies,
        negations=negations,
        cased=cased,
        names=_capitalised(body_tokens, inside_only=True) if cased else (),
        capitalised=capitalised,
        word_set=frozenset(words),
        fact_words=fact_words,
        identifier_words=identifier_words,
        title_words=_title_words(body_tokens) if not cased else frozenset(),
        lower_words=frozenset(t for t, _ in body_tokens if t.isalpha() and t.islower()),
    )


def _title_words(tokens: list[tuple[str, bool]]) -> frozenset[str]:
    """Capitalised words of a text that is not all upper case (all upper case has no
    capitals to read: every word is one)."""
    alpha = [token for token, _ in tokens if token.isalpha()]
    if all(token.isupper() for token in alpha if len(token) > 1):
        return frozenset()
    return frozenset(token.casefold() for token in alpha if token[0].isupper())


def shingles(fact: FactText) -> set[bytes]:
    """MinHash input: character trigrams of each content word, word-bounded. A set, so
    word order and repeated words do not matter; one typo changes at most three."""
    out: set[bytes] = set()
    for word in fact.words:
        padded = f"^{word}$"
        if len(padded) <= 3:
            out.add(padded.encode())
            continue
        out.update(padded[i : i + 3].encode() for i in range(len(padded) - 2))
    return out
