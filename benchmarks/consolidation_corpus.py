"""A planted long-term-memory corpus for the consolidation planner, and how to score a
plan against it.

``generate(n, seed)`` writes n short agent-memory statements whose right answer is known,
in these proportions of entries (so the planner sees mostly unrelated facts, as a real
memoryRef does, with enough of each case to measure):

- ~45% unique facts: about 45 sentence templates ("{company} pays invoices within {days}
  days") filled from a large vocabulary (3,000 people, 45 companies, 40 cities, regions,
  ticket ids, versions, amounts, dates, negations). Templates share their words, so many
  unrelated facts look alike to the candidate stage; no two are duplicates.
- ~30% duplicate families: a fact and 1-4 restatements, each made by one or two of:
  reworded (fillers and function words from ``fact_text.STOPWORDS`` added or dropped:
  "Note:", "FYI,", "the"), re-ordered (a movable phrase moved to the other end of the
  sentence, never across another number, date, identifier or name), re-cased (lower,
  UPPER, Title), typo'd (one adjacent swap, substitution or deletion in a lowercase word
  of six letters or more that carries no guarded fact) and re-spaced (extra spaces,
  tabs, newlines, a space before punctuation, zero-width spaces).
- ~15% look-alike conflict pairs: a fact and the same text with exactly one guarded fact
  changed (number, amount, date, negation, name, identifier); a quarter of them also
  have a duplicate family around the original.
- ~10% keyed facts: 2-3 entries holding one namespace/key slot, spelled differently each
  time ("plan_tier", "planTier", "Plan Tier"), each newer one with a changed value.

Some restatements are hazardous for a reader that takes names from capitals or words
from between apostrophes (``HAZARDS``): they move a capitalised word into or out of the
sentence-initial position ("Please note that Northwind prefers ..."), put a newline
before one, carry an upper-case filler ("..., FYI"), lower- or upper-case a camelCase
product ("HubSpot") or add the filler "just so it's here". They are legitimate
restatements and stay in the corpus (``hazards=False`` leaves them out);
``PlantedCorpus.hazards`` names them so a score can be read with and without them.

Look-alikes and restatements are never keyed, so a planner may only resolve them by
merging (restatements) or not at all (look-alikes). Conflict kinds are the generator's
labels (what it changed), not the planner's reading.

Everything is drawn from one ``random.Random(seed)``; nothing iterates over a set, so the
same seed gives the same corpus in every process.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from memory.consolidation.planner import Plan, PlanEntry, slot_of
from memory.sameness.conflict_guard import compare
from memory.sameness.fact_text import (
    CURRENCY_CODES,
    DATE_WORDS,
    NEGATIONS,
    NUMBER_WORDS,
    ORDINALS,
    STOPWORDS,
    read_fact_text,
)


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


# Vocabulary. Within each list no two words are one typo apart (a test checks it): a fact
# about "Sara" and one about "Sarah" would be two facts the planner may rightly merge.
FIRST_NAMES = _split(
    "Alice, Bob, Carol, Priya, Marcus, Elena, Tomás, Aiko, Jordan, Fatima, Liam, Sofia, "
    "Noah, Amara, Diego, Hannah, Kenji, Leila, Mateo, Nadia, Oscar, Petra, Quentin, Rosa, "
    "Samir, Tessa, Umar, Vera, Wes, Ximena, Yusuf, Zara, Bruno, Chloe, Dmitri, Emeka, "
    "Farah, Gustavo, Helga, Ingrid, Jonas, Keiko, Lucia, Mohammed, Nora, Olga, Pablo, "
    "Ravi, Sven, Tariq, Beatriz, Viktor, Wendy, Yasmin, Zoltan, Anika, Cyrus, Dalia, "
    "Esther, Felix"
)
LAST_NAMES = _split(
    "Chen, Okafor, Schmidt, Rossi, Novak, Tanaka, Haddad, Kowalski, Moreau, Silva, "
    "Jensen, Ivanova, Nakamura, Lindqvist, Fernandes, Mensah, Duarte, Horvat, Kapoor, "
    "Morales, Nguyen, Oyelaran, Petrov, Quinn, Reyes, Sato, Dubois, Varga, Weber, Yilmaz, "
    "Zhang, Abbott, Brennan, Castillo, Dietrich, Eriksen, Fischer, Garcia, Hughes, Iqbal, "
    "Jovanovic, Keller, Lopez, Murphy, Ortega, Park, Rahman, Suzuki, Tremblay, Vogel"
)
COMPANIES = _split(
    "Acme, Globex, Initech, Hooli, Umbrella Health, Stark Logistics, Wayne Analytics, "
    "Vandelay Imports, Northwind, Contoso, Fabrikam, Tyrell Systems, Soylent Foods, "
    "Cyberdyne, Wonka Confectionery, Gringotts Bank, Oscorp, Massive Dynamic, "
    "Aperture Labs, Black Mesa, Pied Piper, Dunder Mifflin, Prestige Worldwide, "
    "Bluth Company, Sterling Cooper, Monarch Solutions, Virtucon, Gekko Partners, Rekall, "
    "Weyland Freight, Nakatomi Trading, Duff Brewing, Primatech, Lacuna Clinics, "
    "Spacely Sprockets, Cogswell Cogs, Gadgetron, Abstergo, Sirius Cybernetics, "
    "Tessier Ashpool, Yoyodyne, Zorin Mining, Veridian Textiles, Ingen Biotech, Kerbal Aerospace"
)
CITIES = _split(
    "Berlin, Lisbon, Madrid, Toronto, Austin, Denver, Nairobi, Lagos, Mumbai, Pune, "
    "Singapore, Sydney, Osaka, Seoul, Warsaw, Prague, Vienna, Zurich, Dublin, Oslo, "
    "Helsinki, Tallinn, Porto, Lyon, Milan, Bogotá, Lima, Santiago, Montreal, Chicago, "
    "Seattle, Boston, Atlanta, Dubai, Cairo, Accra, Manila, Jakarta, Hanoi, Auckland"
)
# A third are camelCase, as real product names are (re-casing them is a hazard).
PRODUCTS = _split(
    "Salesforce, Zendesk, Notion, Snowflake, Datadog, Jira, Figma, Grafana, Metabase, "
    "Airtable, Looker, Tableau, Stripe, Twilio, Okta, Sentry, Terraform, Kubernetes, "
    "Asana, Intercom, HubSpot, GitHub, GitLab, PagerDuty, QuickBooks, NetSuite, BigQuery, "
    "PostgreSQL, DocuSign, SendGrid"
)
LANGUAGES = _split("German, Spanish, Portuguese, Japanese, French, Italian, Korean, Dutch")
SERVICES = _split(
    "billing service, auth gateway, search indexer, email worker, report scheduler, "
    "export pipeline, notification hub, ledger service, pricing engine, sync daemon, "
    "checkout flow, webhook relay, audit logger, image resizer, fraud scorer, "
    "metrics collector, backup job, invoice renderer, session cache, payroll batch, "
    "geocoding proxy, upload scanner"
)
TEAMS = _split(
    "platform team, data team, finance team, legal team, support team, growth team, "
    "security team, design team, sales team, infra team, payments squad, mobile crew"
)
DOCS = _split(
    "runbook, postmortem, roadmap, contract, quote, proposal, budget, slide deck, "
    "release notes, design doc, status report, security review, onboarding guide, "
    "price sheet, vendor questionnaire, board memo"
)
TOPICS = _split(
    "contract renewal, data retention, price increase, security audit, vendor review, "
    "territory planning, onboarding, migration plan, hiring plan, tax filing, "
    "budget approval, product launch, incident review, compliance training, "
    "capacity planning, licence audit, office move, churn analysis"
)
PREFERENCES = _split(
    "short bullet summaries, metric units, dark mode dashboards, digest newsletters, "
    "plain text emails, written agendas, async updates, detailed changelogs, "
    "printed invoices, video calls, phone calls, shared spreadsheets, slide summaries"
)
PURPOSES = _split(
    "ticketing, analytics, alerting, invoicing, internal docs, the sales pipeline, "
    "customer support, onboarding, payroll, contract signing, release tracking"
)
CHANNELS = _split("email, Slack, phone, SMS, Teams, WhatsApp, video call, Signal")
REGIONS = _split(
    "eu-west-1, eu-west-2, eu-west-3, eu-central-1, eu-north-1, us-east-1, us-east-2, "
    "us-west-1, us-west-2, ap-southeast-1, ap-southeast-2, ap-northeast-1, ap-south-1, "
    "sa-east-1, ca-central-1, me-south-1, af-south-1"
)
TICKET_PREFIXES = _split("INV, OPS, SUP, BILL, SEC, PLAT, DATA, HR, LEG, CS")
WEEKDAYS = _split("Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday")
MONTHS = _split(
    "January, February, March, April, May, June, July, August, September, October, "
    "November, December"
)
CURRENCIES = ["EUR", "USD", "GBP", "CHF", "JPY", "CAD"]
_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥"}
TIMES = ["7am", "8am", "9am", "10am", "11am", "2pm", "3pm", "4pm", "5pm", "6pm", "8:30", "17:00"]

# Slot kinds: what a look-alike copy changes (None: the slot carries no guarded fact).
_CONFLICT_KIND = {
    "person": "name",
    "first": "name",
    "company": "name",
    "city": "name",
    "region": "identifier",
    "ticket": "identifier",
    "version": "identifier",
    "time": "identifier",
    "days": "number",
    "count": "number",
    "hours": "number",
    "percent": "number",
    "year": "number",
    "dom": "number",
    "amount": "amount",
    "weekday": "date",
    "month": "date",
    "not": "negation",
    "never": "negation",
}
CONFLICT_KINDS = ("number", "amount", "date", "negation", "name", "identifier")


def _person(rng: random.Random) -> str:
    first = rng.choice(FIRST_NAMES)
    return first if rng.random() < 0.3 else f"{first} {rng.choice(LAST_NAMES)}"


def _amount(
    rng: random.Random,
    currency: str | None = None,
    value: int | None = None,
    symbol: bool | None = None,
) -> str:
    """An amount as "$1,250" or as "1,250 USD"."""
    currency = currency or rng.choice(CURRENCIES)
    value = value if value is not None else rng.choice([5, 10, 25]) * rng.randint(2, 400)
    symbol = rng.random() < 0.7 if symbol is None else symbol
    if currency in _SYMBOLS and symbol:
        return f"{_SYMBOLS[currency]}{value:,}"
    return f"{value:,} {currency}"


def _ticket(rng: random.Random) -> str:
    return f"{rng.choice(TICKET_PREFIXES)}-{rng.randint(100, 99999)}"


def _version(rng: random.Random) -> str:
    major, minor, patch = rng.randint(1, 12), rng.randint(0, 30), rng.randint(0, 20)
    return f"v{major}.{minor}" if rng.random() < 0.4 else f"v{major}.{minor}.{patch}"


_SLOT_VALUES = {
    "person": _person,
    "first": lambda rng: rng.choice(FIRST_NAMES),
    "company": lambda rng: rng.choice(COMPANIES),
    "city": lambda rng: rng.choice(CITIES),
    "product": lambda rng: rng.choice(PRODUCTS),
    "language": lambda rng: rng.choice(LANGUAGES),
    "service": lambda rng: rng.choice(SERVICES),
    "team": lambda rng: rng.choice(TEAMS),
    "doc": lambda rng: rng.choice(DOCS),
    "topic": lambda rng: rng.choice(TOPICS),
    "preference": lambda rng: rng.choice(PREFERENCES),
    "purpose": lambda rng: rng.choice(PURPOSES),
    "channel": lambda rng: rng.choice(CHANNELS),
    "currency": lambda rng: rng.choice(CURRENCIES),
    "region": lambda rng: rng.choice(REGIONS),
    "ticket": _ticket,
    "version": _version,
    "time": lambda rng: rng.choice(TIMES),
    "days": lambda rng: str(rng.randint(2, 120)),
    "count": lambda rng: str(rng.choice([5, 10, 12, 20, 25, 40, 50, 75, 150, 600, 2400])),
    "hours": lambda rng: str(rng.randint(2, 72)),
    "percent": lambda rng: f"{rng.randint(1, 40)}%",
    "year": lambda rng: str(rng.randint(2012, 2025)),
    "dom": lambda rng: str(rng.randint(1, 28)),
    "amount": _amount,
    "weekday": lambda rng: rng.choice(WEEKDAYS),
    "month": lambda rng: rng.choice(MONTHS),
    "not": lambda rng: rng.choice(["", "not "]),
    "never": lambda rng: rng.choice(["", "never "]),
}

# Sentence templates: {slot} (a trailing digit names a second slot of that kind),
# [words ] optional function words (all in STOPWORDS), and " | " before a phrase that may
# stand at either end of the sentence. A movable phrase shares no kind of guarded fact
# (numbers, identifiers, dates, names) with the rest, so moving it keeps their order.
# "s": a statement; "i": an instruction (takes other fillers).
TEMPLATES: list[tuple[str, str]] = [
    ("s", "{person} from {company} prefers invoices in {currency} | for [the ]{topic}"),
    ("s", "[the ]trial for {company} lasts {days} days"),
    ("i", "deploy [the ]{service} to {region} | on {weekday}"),
    ("s", "{first} is {not}available for calls before {time}"),
    ("s", "[the ]{team} meets every {weekday} at {time} | to discuss [the ]{topic}"),
    ("s", "{company} renews [the ]contract in {month} | for {count} seats"),
    ("s", "[the ]refund limit for {company} is {amount}"),
    ("s", "{person} approved a budget of {amount} for [the ]{topic}"),
    ("s", "ticket {ticket} tracks [the ]{service} outage"),
    ("s", "[the ]{service} [currently ]runs {version} in {region}"),
    ("i", "send [the ]{doc} to {person} by {weekday}"),
    ("s", "{person} [currently ]works from {city} and logs {hours} hours a week"),
    ("s", "{company} [currently ]uses {product} for {purpose}"),
    ("s", "[the ]{service} is {never}deployed on {weekday}"),
    ("s", "{first} manages [the ]{company} account | since {year}"),
    ("s", "[the ]{team} owns [the ]{service} | in {region}"),
    ("i", "escalate {ticket} to [the ]{team} | after {hours} hours"),
    ("s", "{company} pays invoices within {days} days"),
    ("s", "[the ]discount for {company} is {percent} | on annual plans"),
    ("s", "{person} speaks {language} with [the ]{company} buyers"),
    ("s", "{first} is {not}allowed to approve refunds above {amount}"),
    ("s", "[the ]{month} invoice for {company} came to {amount}"),
    ("i", "rotate [the ]{product} api keys every {days} days"),
    ("s", "{company} has {count} active seats on {product}"),
    ("s", "[the ]{team} offsite is in {city} in {month}"),
    ("s", "{person} {never}wants [the ]{doc} as a PDF attachment"),
    ("s", "{company} signed [the ]{doc} on {month} {dom}"),
    ("s", "backups of [the ]{service} are kept for {days} days | in {region}"),
    ("s", "{first} prefers {preference} | for [the ]{topic}"),
    ("s", "{company} closes its books on day {dom} of each month"),
    ("i", "page [the ]on-call engineer when [the ]{service} latency exceeds {hours} seconds"),
    ("s", "[the ]error budget for [the ]{service} is {percent} | per quarter"),
    ("s", "{person} reports to {person2} | on [the ]{team}"),
    ("s", "{company} wants quotes in {currency} with net {days} payment terms"),
    ("s", "[the ]{city} office is {not}closed on {weekday}"),
    ("i", "merge {ticket} only after {version} ships"),
    ("s", "{company} stores customer data in {region} | for compliance reasons"),
    ("s", "[the ]{topic} deadline is {month} {dom}"),
    ("s", "{first} will {not}join [the ]{topic} call | on {weekday}"),
    ("s", "{person} needs {count} licences for {product}"),
    ("s", "[the ]tax rate on {company} invoices is {percent}"),
    ("s", "{company} prefers {channel} over {channel2} | for urgent requests"),
    ("s", "[the ]support contract for {company} promises a reply within {hours} hours"),
    ("i", "back up [the ]{service} database at {time} | every {weekday}"),
    ("s", "{company} churned in {month} | after a price increase"),
    ("s", "{person} has {never}signed off on [the ]{doc} for {company}"),
    ("s", "{person} flies to {city} for [the ]{topic} kickoff | on {weekday}"),
]

# Fillers: every word in STOPWORDS, so a restatement with or without one is the same fact.
_STATEMENT_PREFIXES = [
    "Note: ", "FYI, ", "FYI: ", "Remember that ", "Please note that ", "Reminder: ",
    "Also, ", "BTW, ", "Note that ", "Just a reminder: ",
]  # fmt: skip
_INSTRUCTION_PREFIXES = [
    "Note: ", "Reminder: ", "Remember: ", "Please ", "FYI: ", "Also, ", "Just a reminder: ",
]  # fmt: skip
_SUFFIXES = [", FYI", ", fyi", " (just a reminder)", " (note)", ", just so it's here"]
_VARIANT_OPS = ("reword", "reorder", "recase", "typo", "respace")
_SLOT = re.compile(r"\{([a-z]+)(\d?)\}")
_OPTIONAL = re.compile(r"\[([^\]]*)\]")


@dataclass(frozen=True)
class _Spec:
    """One rendering of a template: slot values plus the choices a restatement varies."""

    template: int
    values: tuple[tuple[str, str], ...]  # (slot, value), in template order
    optional: tuple[bool, ...]  # each [optional ] word: present?
    phrase_first: bool = False
    prefix: str = ""
    suffix: str = ""
    period: bool = False

    @property
    def mood(self) -> str:
        return TEMPLATES[self.template][0]


def _render(spec: _Spec) -> str:
    values = dict(spec.values)
    present = iter(spec.optional)
    text = _OPTIONAL.sub(lambda m: m.group(1) if next(present) else "", TEMPLATES[spec.template][1])
    text = _SLOT.sub(lambda m: values[m.group(1) + m.group(2)], text)
    core, _, phrase = text.partition(" | ")
    body = f"{phrase}, {core}" if phrase and spec.phrase_first else f"{core} {phrase}".strip()
    text = spec.prefix + body if spec.prefix else body[:1].upper() + body[1:]
    return text + spec.suffix + ("." if spec.period else "")


def _slots(template: int) -> list[str]:
    return [m.group(1) + m.group(2) for m in _SLOT.finditer(TEMPLATES[template][1])]


def _base_spec(rng: random.Random, template: int) -> _Spec:
    values: list[tuple[str, str]] = []
    for slot in _slots(template):
        kind = slot.rstrip("0123456789")
        value = _SLOT_VALUES[kind](rng)
        while slot[-1].isdigit() and value in dict(values).values():
            value = _SLOT_VALUES[kind](rng)  # {person2} is someone else
        values.append((slot, value))
    n_optional = len(_OPTIONAL.findall(TEMPLATES[template][1]))
    mood = TEMPLATES[template][0]
    prefixes = _STATEMENT_PREFIXES if mood == "s" else _INSTRUCTION_PREFIXES
    return _Spec(
        template=template,
        values=tuple(values),
        optional=tuple(rng.random() < 0.6 for _ in range(n_optional)),
        phrase_first=" | " in TEMPLATES[template][1] and rng.random() < 0.25,
        prefix=rng.choice(prefixes) if rng.random() < 0.15 else "",
        suffix=rng.choice(_SUFFIXES) if rng.random() < 0.05 else "",
        period=rng.random() < 0.5,
    )


# --- restatements ---------------------------------------------------------------------


def _reword(rng: random.Random, spec: _Spec) -> _Spec:
    """Add or drop a leading or trailing filler, or an optional function word (one or two
    of these), and the final full stop."""
    prefixes = _STATEMENT_PREFIXES if spec.mood == "s" else _INSTRUCTION_PREFIXES
    changes = ["prefix", "suffix", "optional"] if spec.optional else ["prefix", "suffix"]
    for change in rng.sample(changes, rng.randint(1, 2)):
        if change == "prefix":
            others = [p for p in prefixes if p != spec.prefix]
            spec = replace(spec, prefix="" if spec.prefix else rng.choice(others))
        elif change == "suffix":
            spec = replace(spec, suffix="" if spec.suffix else rng.choice(_SUFFIXES))
        else:
            flip = rng.randrange(len(spec.optional))
            optional = tuple(v != (i == flip) for i, v in enumerate(spec.optional))
            spec = replace(spec, optional=optional)
    return replace(spec, period=rng.random() < 0.5)


_PLAIN_WORD = re.compile(r"(?<![\w'\u2019.\-@/:])[a-z]{6,}(?![\w'\u2019\-@/:]|\.\w)")
_GUARDED_WORDS = (
    STOPWORDS | NEGATIONS | CURRENCY_CODES | set(DATE_WORDS) | set(NUMBER_WORDS) | set(ORDINALS)
)
_KEYBOARD_NEIGHBOURS = {
    "a": "sq", "b": "vn", "c": "xv", "d": "sf", "e": "wr", "f": "dg", "g": "fh", "h": "gj",
    "i": "uo", "j": "hk", "k": "jl", "l": "k", "m": "n", "n": "bm", "o": "ip", "p": "o",
    "q": "w", "r": "et", "s": "ad", "t": "ry", "u": "yi", "v": "cb", "w": "qe", "x": "zc",
    "y": "tu", "z": "x",
}  # fmt: skip


def _typo(rng: random.Random, text: str) -> str | None:
    """One typo in a lowercase word of six letters or more that occurs once in the text
    and carries no guarded fact (not a name, number, date, negation or identifier)."""
    counts = Counter(w.casefold() for w in re.findall(r"\w+", text))
    spots = [
        m
        for m in _PLAIN_WORD.finditer(text)
        if counts[m.group()] == 1 and m.group() not in _GUARDED_WORDS
    ]
    if not spots:
        return None
    spot = rng.choice(spots)
    word = spot.group()
    for _ in range(10):
        i = rng.randrange(1, len(word) - 1)
        how = rng.choice(["swap", "substitute", "delete"])
        if how == "swap" and word[i] != word[i + 1]:
            typo = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif how == "substitute":
            typo = word[:i] + rng.choice(_KEYBOARD_NEIGHBOURS[word[i]]) + word[i + 1 :]
        elif how == "delete":
            typo = word[:i] + word[i + 1 :]
        else:
            continue
        if typo != word and typo not in counts and typo not in _GUARDED_WORDS:
            return text[: spot.start()] + typo + text[spot.end() :]
    return None


def _title(text: str) -> str:
    """Title Case as a person types it: first letters up, the rest untouched (str.title
    would also write "Doesn'T" and "Eu-West-1")."""
    return re.sub(r"(?<!\S)([^\W\d_])", lambda m: m.group(1).upper(), text)


def _respace(rng: random.Random, text: str) -> str:
    """Whitespace noise: 1-3 of extra spaces, a tab, a newline, a space before
    punctuation, a zero-width space, whitespace around the text."""
    for how in rng.sample(
        ["spaces", "tab", "newline", "punct", "zwsp", "edges"], rng.randint(1, 3)
    ):
        gaps = [m.start() for m in re.finditer(r" ", text)]
        if how == "punct":
            spots = [m.start() for m in re.finditer(r"(?<=\S)[,.:;)](?=\s|$)", text)]
            if spots:
                at = rng.choice(spots)
                text = text[:at] + " " + text[at:]
        elif how == "zwsp":
            at = rng.randrange(len(text) + 1)
            text = text[:at] + "\u200b" + text[at:]
        elif how == "edges":
            text = rng.choice([" ", "\n", "\t", "  "]) + text + rng.choice([" ", "\n", " \n"])
        elif gaps:
            at = rng.choice(gaps)
            insert = {"spaces": rng.choice(["  ", "   "]), "tab": "\t", "newline": "\n"}[how]
            text = text[:at] + insert + text[at + 1 :]
    return text


_BLANK = " \t\n\u200b"


def _newline_before_capital(text: str) -> bool:
    return any(
        m.group(1).isupper() and text[: m.start()].strip(_BLANK)
        for m in re.finditer(r"\n[\s\u200b]*(\w)", text)
    )


def _capitalised_inside(text: str) -> list[str]:
    """Capitalised words not at the start of a sentence or clause, in order: what a
    reader that takes names from capitals reads as names."""
    out: list[str] = []
    sentence_start = True
    for raw in text.split():
        word = raw.strip(".,;:!?()\"'")
        if word.isalpha() and word[0].isupper() and not sentence_start:
            out.append(word.casefold())
        sentence_start = raw.endswith((":", ".", "!", "?"))
    return out


_CAMEL = re.compile(r"\b[A-Za-z]+[a-z][A-Z]\w*")
# Restatements that a reader of capitals or of contractions may take for another fact.
HAZARDS = {
    "capitals": "a capitalised word moves into or out of the sentence-initial position",
    "newline": "a newline stands before a capitalised word inside the sentence",
    "camelcase": "a camelCase product name is lower- or upper-cased",
    "contraction": "a filler with a contraction (it's) is added or dropped",
    "acronym": "an upper-case filler (FYI) stands inside the sentence",
}


def _restate(
    rng: random.Random, base: _Spec, ops: Sequence[str]
) -> tuple[str, tuple[str, ...]] | None:
    """The base restated by ``ops``, and the hazards it carries (keys of HAZARDS). None
    when an operation does not apply (no word to typo)."""
    spec = _reword(rng, base) if "reword" in ops else base
    if "reorder" in ops:
        spec = replace(spec, phrase_first=not spec.phrase_first)
    text = _render(spec)
    hazards = []
    if ("'" in spec.prefix + spec.suffix) != ("'" in base.prefix + base.suffix):
        hazards.append("contraction")
    before, after = _capitalised_inside(_render(base)), _capitalised_inside(text)
    if any(w in STOPWORDS for w in before + after):
        hazards.append("acronym")
    capitals = [w for w in before if w not in STOPWORDS] != [w for w in after if w not in STOPWORDS]
    if "typo" in ops:
        typoed = _typo(rng, text)
        if typoed is None:
            return None
        text = typoed
    if "recase" in ops:
        style = rng.choice(["lower", "upper", "title"])
        capitals = False  # no case left to read names from
        if style != "title" and _CAMEL.search(text):
            hazards.append("camelcase")
        text = {"lower": text.lower(), "upper": text.upper(), "title": _title(text)}[style]
    if capitals:
        hazards.append("capitals")
    if "respace" in ops:
        text = _respace(rng, text)
        if "recase" not in ops and _newline_before_capital(text):
            hazards.append("newline")
    return text, tuple(hazards)


def _variant(
    rng: random.Random, base: _Spec, hazards: bool
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A restatement of the base by one or two operations: (text, operations, hazards)."""
    movable = " | " in TEMPLATES[base.template][1]
    available = [op for op in _VARIANT_OPS if movable or op != "reorder"]
    for _ in range(20):
        ops = tuple(sorted(rng.sample(available, 1 if rng.random() < 0.6 else 2)))
        made = _restate(rng, base, ops)
        if made is not None and (hazards or not made[1]):
            return made[0], ops, made[1]
    return _render(base).replace(" ", "  ", 1), ("respace",), ()  # applies, no hazard


# --- look-alikes ----------------------------------------------------------------------


def _other(rng: random.Random, kind: str, old: str) -> tuple[str, str]:
    """A value of slot kind ``kind`` that differs from ``old`` in one guarded fact, and
    the conflict kind that makes."""
    if kind == "person":
        first, _, last = old.partition(" ")
        new = rng.choice([n for n in FIRST_NAMES if n != first])
        return (f"{new} {last}" if last else new), "name"
    if kind == "amount":
        currency = next(c for c in CURRENCIES if c in old or _SYMBOLS.get(c, "\0") in old)
        value, symbol = int(re.sub(r"\D", "", old)), not old[0].isdigit()
        if rng.random() < 0.5:  # $500 / €500
            new_currency = rng.choice([c for c in CURRENCIES if c != currency])
            return _amount(rng, new_currency, value, symbol), "amount"
        return _amount(rng, currency, value + rng.choice([5, 25, 100, 150]), symbol), "amount"
    if kind == "ticket":
        prefix, _, digits = old.partition("-")
        if len(set(digits)) > 1 and rng.random() < 0.5:
            i = rng.choice([i for i in range(len(digits) - 1) if digits[i] != digits[i + 1]])
            return f"{prefix}-{digits[:i]}{digits[i + 1]}{digits[i]}{digits[i + 2 :]}", "identifier"
        return f"{prefix}-{int(digits) + rng.randint(1, 9)}", "identifier"
    if kind in ("not", "never"):
        return ("" if old else f"{kind} "), "negation"
    pool = {
        "first": FIRST_NAMES, "company": COMPANIES, "city": CITIES, "region": REGIONS,
        "time": TIMES, "weekday": WEEKDAYS, "month": MONTHS,
    }.get(kind)  # fmt: skip
    for _ in range(50):
        new = rng.choice(pool) if pool else _SLOT_VALUES[kind](rng)
        if new != old:
            return new, _CONFLICT_KIND[kind]
    raise AssertionError(f"no other value for {kind}")  # pragma: no cover


# --- keyed facts ----------------------------------------------------------------------

# (key words, text, value kind): one slot per (entity, key); the text says its value.
KEYED_FACTS: list[tuple[str, str, str]] = [
    ("plan tier", "Plan tier for {entity}: {value}", "tier"),
    ("billing currency", "Billing currency for {entity}: {value}", "currency"),
    ("seat count", "Seat count for {entity}: {value}", "count"),
    ("account manager", "Account manager for {entity}: {value}", "person"),
    ("renewal month", "Renewal month for {entity}: {value}", "month"),
    ("support region", "Support region for {entity}: {value}", "region"),
    ("payment terms", "Payment terms for {entity}: net {value} days", "days"),
    ("timezone", "Time zone of {entity}: {value}", "zone"),
    ("preferred channel", "Preferred channel of {entity}: {value}", "channel"),
    ("invoice day", "Invoice day for {entity}: {value}", "weekday"),
    ("contract value", "Contract value for {entity}: {value}", "amount"),
    ("primary contact", "Primary contact at {entity}: {value}", "person"),
    ("home city", "Home city of {entity}: {value}", "city"),
    ("api version", "API version pinned by {entity}: {value}", "version"),
]
_KEYED_VALUES = {
    **_SLOT_VALUES,
    "tier": lambda rng: rng.choice(["Starter", "Team", "Pro", "Business", "Enterprise", "Scale"]),
    "zone": lambda rng: rng.choice(["CET", "UTC", "PST", "EST", "IST", "JST", "AEST", "BRT"]),
}


def _spellings(words: list[str]) -> list[str]:
    """One name, spelled the ways clients write keys; slot_of folds them all together."""
    lower = [w.casefold() for w in words]
    return [
        "_".join(lower),
        "-".join(lower),
        lower[0] + "".join(w.capitalize() for w in lower[1:]),
        "".join(w.capitalize() for w in lower),
        " ".join(w.capitalize() for w in lower),
        "_".join(lower).upper(),
        ".".join(lower),
    ]


def _entity(rng: random.Random) -> tuple[str, list[str]]:
    """A company or a person, and the namespaces naming it (case and separators vary)."""
    if rng.random() < 0.5:
        company = rng.choice(COMPANIES)
        return company, _spellings(company.split())
    person = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    names = _spellings(person.split())
    return person, [
        f"{user}{sep}{name}"
        for user in ("user", "User", "USER")
        for sep, name in zip(":/.", names[::2], strict=False)
    ]


# --- the corpus -----------------------------------------------------------------------


@dataclass
class PlantedCorpus:
    entries: list[PlanEntry]
    # Ids that belong in one cluster (a fact and its restatements).
    duplicate_families: list[frozenset[str]]
    # (id_a, id_b, kind): look-alikes that must never share a cluster.
    conflict_pairs: list[tuple[str, str, str]]
    # Older holder of a slot -> the newest holder, which must supersede it.
    superseded: dict[str, str]
    # Restatement id -> the fact it restates, the operations that made it, and its
    # hazards (keys of HAZARDS; restatements without any are not listed).
    variant_base: dict[str, str] = field(default_factory=dict)
    variant_ops: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hazards: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class _Draft:
    content: str
    slot: tuple[str, str] | None = None


# Share of entries per case (see the module docstring) and the mean entries per group.
_MIX = {
    "single": (0.45, 1.0),
    "family": (0.30, 3.5),
    "conflict": (0.15, 2.375),
    "keyed": (0.10, 2.5),
}


def generate(n_entries: int, seed: int, *, hazards: bool = True) -> PlantedCorpus:
    rng = random.Random(seed)
    drafts: list[_Draft] = []
    families: list[list[int]] = []
    conflicts: list[tuple[int, int, str]] = []
    keyed: list[list[int]] = []
    variants: dict[int, tuple[int, tuple[str, ...], tuple[str, ...]]] = {}
    used: set[tuple[int, tuple[tuple[str, str], ...]]] = set()
    used_slots: set[tuple[str, str]] = set()
    by_kind = {
        kind: [
            t
            for t in range(len(TEMPLATES))
            if any(_CONFLICT_KIND.get(s.rstrip("0123456789")) == kind for s in _slots(t))
        ]
        for kind in CONFLICT_KINDS
    }
    groups = list(_MIX)
    weights = [share / size for share, size in _MIX.values()]

    def add(content: str, slot: tuple[str, str] | None = None) -> int:
        drafts.append(_Draft(content, slot))
        return len(drafts) - 1

    def fresh(templates: Sequence[int]) -> _Spec:
        while True:
            spec = _base_spec(rng, rng.choice(templates))
            if (spec.template, spec.values) not in used:
                used.add((spec.template, spec.values))
                return spec

    def add_family(base: _Spec, base_id: int, size: int) -> None:
        members = [base_id]
        for _ in range(size):
            text, ops, hazard = _variant(rng, base, hazards)
            members.append(add(text))
            variants[members[-1]] = (base_id, ops, hazard)
        families.append(members)

    all_templates = range(len(TEMPLATES))
    while len(drafts) < n_entries:
        room = n_entries - len(drafts)
        group = rng.choices(groups, weights)[0]
        if group == "family" and room >= 2:
            base = fresh(all_templates)
            add_family(base, add(_render(base)), min(rng.randint(1, 4), room - 1))
        elif group == "conflict" and room >= 2:
            kind = rng.choice(CONFLICT_KINDS)
            base = fresh(by_kind[kind])
            slot = rng.choice(
                [
                    s
                    for s in _slots(base.template)
                    if _CONFLICT_KIND.get(s.rstrip("0123456789")) == kind
                ]
            )
            values = dict(base.values)
            values[slot], _ = _other(rng, slot.rstrip("0123456789"), values[slot])
            copy = replace(base, values=tuple(values.items()))
            if (copy.template, copy.values) in used:
                continue
            used.add((copy.template, copy.values))
            base_id = add(_render(base))
            conflicts.append((base_id, add(_render(copy)), kind))
            if rng.random() < 0.25 and room >= 4:
                add_family(base, base_id, rng.randint(1, 2))
        elif group == "keyed" and room >= 2:
            while True:  # a slot not used yet (people give 42,000 of them)
                words, text, value_kind = rng.choice(KEYED_FACTS)
                entity, namespaces = _entity(rng)
                key_slot = slot_of(namespaces[0], words)
                if key_slot is not None and key_slot not in used_slots:
                    break
            used_slots.add(key_slot)
            chain: list[int] = []
            seen: list[str] = []
            for _ in range(min(rng.choice([2, 2, 3]), room)):
                value = _KEYED_VALUES[value_kind](rng)
                while value in seen:
                    value = _KEYED_VALUES[value_kind](rng)
                seen.append(value)
                namespace, key = rng.choice(namespaces), rng.choice(_spellings(words.split()))
                assert slot_of(namespace, key) == key_slot, (namespace, key)
                chain.append(add(text.format(entity=entity, value=value), key_slot))
            keyed.append(chain)
        else:
            add(_render(fresh(all_templates)))
    return _assemble(rng, drafts, families, conflicts, keyed, variants)


def _assemble(
    rng: random.Random,
    drafts: list[_Draft],
    families: list[list[int]],
    conflicts: list[tuple[int, int, str]],
    keyed: list[list[int]],
    variants: dict[int, tuple[int, tuple[str, ...], tuple[str, ...]]],
) -> PlantedCorpus:
    """Shuffle the drafts into id order (a fact's restatements arrive at other times),
    keeping every keyed chain in time order, and stamp them with times that come in
    sessions: a few entries minutes apart, then a gap of hours."""
    position = list(range(len(drafts)))
    rng.shuffle(position)
    for chain in keyed:
        for draft, at in zip(chain, sorted(position[d] for d in chain), strict=True):
            position[draft] = at
    stamps: list[datetime] = []
    now = datetime(2025, 1, 6, 8, 0, tzinfo=UTC)
    for _ in drafts:
        gap = (
            timedelta(hours=rng.randint(2, 40))
            if rng.random() < 0.1
            else timedelta(seconds=rng.randint(15, 900))
        )
        now += gap
        stamps.append(now)
    ids = [f"c{position[d]:07d}" for d in range(len(drafts))]
    entries = sorted(
        (
            PlanEntry(
                id=ids[d],
                version=1,
                content=draft.content,
                updated_at=stamps[position[d]],
                slot=draft.slot,
            )
            for d, draft in enumerate(drafts)
        ),
        key=lambda e: e.id,
    )
    return PlantedCorpus(
        entries=entries,
        duplicate_families=[frozenset(ids[d] for d in members) for members in families],
        conflict_pairs=[(ids[a], ids[b], kind) for a, b, kind in conflicts],
        superseded={ids[old]: ids[chain[-1]] for chain in keyed for old in chain[:-1]},
        variant_base={ids[d]: ids[base] for d, (base, _, _) in variants.items()},
        variant_ops={ids[d]: ops for d, (_, ops, _) in variants.items()},
        hazards={ids[d]: hazard for d, (_, _, hazard) in variants.items() if hazard},
    )


# --- scores ---------------------------------------------------------------------------


@dataclass
class Scores:
    entries: int
    # Same-cluster pairs: unordered id pairs in one cluster by merge (survivor + merged)
    # against the pairs within each planted family.
    merge_pairs_predicted: int
    merge_pairs_planted: int
    merge_pairs_correct: int
    # Superseded ids: correct when superseded by the planted newest holder of the slot.
    superseded_predicted: int
    superseded_planted: int
    superseded_correct: int
    # Per planted conflict kind: pairs, pairs that ended in one cluster, pairs reported.
    conflict_pairs: dict[str, int]
    conflict_false_merges: dict[str, int]
    conflicts_detected: dict[str, int]
    # Per restatement operation (and for hazards): (merged with the base, total).
    variants_by_op: dict[str, tuple[int, int]]

    @property
    def merge_precision(self) -> float:
        return _ratio(self.merge_pairs_correct, self.merge_pairs_predicted)

    @property
    def merge_recall(self) -> float:
        return _ratio(self.merge_pairs_correct, self.merge_pairs_planted)

    @property
    def supersession_precision(self) -> float:
        return _ratio(self.superseded_correct, self.superseded_predicted)

    @property
    def supersession_recall(self) -> float:
        return _ratio(self.superseded_correct, self.superseded_planted)

    @property
    def false_merges(self) -> int:
        return sum(self.conflict_false_merges.values())

    @property
    def false_merge_rate(self) -> float:
        return self.false_merges / max(1, sum(self.conflict_pairs.values()))

    @property
    def conflict_detection_recall(self) -> float:
        return _ratio(sum(self.conflicts_detected.values()), sum(self.conflict_pairs.values()))


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def score(corpus: PlantedCorpus, plan: Plan) -> Scores:
    family_of = {i: f for f, family in enumerate(corpus.duplicate_families) for i in family}
    merge_group: dict[str, int] = {}
    final: dict[str, str] = {}  # id -> survivor of the cluster it ended in
    predicted = correct = 0
    for c, cluster in enumerate(plan.clusters):
        members = (cluster.survivor, *cluster.merged)
        predicted += _pairs(len(members))
        correct += sum(
            _pairs(n)
            for f, n in Counter(family_of.get(i, -1 - c) for i in members).items()
            if f >= 0
        )
        for i in members:
            merge_group[i] = c
        for i in (*members, *cluster.superseded):
            final[i] = cluster.survivor
    planted_superseded = corpus.superseded
    superseded = {i: c.survivor for c in plan.clusters for i in c.superseded}
    reported = {frozenset((p.first, p.second)) for p in plan.conflicts}
    pairs: Counter[str] = Counter()
    merged: Counter[str] = Counter()
    detected: Counter[str] = Counter()
    for a, b, kind in corpus.conflict_pairs:
        pairs[kind] += 1
        end_a, end_b = final.get(a, a), final.get(b, b)
        merged[kind] += end_a == end_b
        detected[kind] += frozenset((end_a, end_b)) in reported
    by_op: dict[str, list[int]] = {}
    for variant, ops in corpus.variant_ops.items():
        base = corpus.variant_base[variant]
        together = variant in merge_group and merge_group[variant] == merge_group.get(base)
        hazards = corpus.hazards.get(variant, ())
        labels = [*ops, *(f"hazard:{h}" for h in hazards), "hazardous" if hazards else "safe"]
        for label in labels:
            tally = by_op.setdefault(label, [0, 0])
            tally[0] += together
            tally[1] += 1
    return Scores(
        entries=len(corpus.entries),
        merge_pairs_predicted=predicted,
        merge_pairs_planted=sum(_pairs(len(f)) for f in corpus.duplicate_families),
        merge_pairs_correct=correct,
        superseded_predicted=len(superseded),
        superseded_planted=len(planted_superseded),
        superseded_correct=sum(planted_superseded.get(i) == s for i, s in superseded.items()),
        conflict_pairs={k: pairs[k] for k in CONFLICT_KINDS if pairs[k]},
        conflict_false_merges={k: merged[k] for k in CONFLICT_KINDS if pairs[k]},
        conflicts_detected={k: detected[k] for k in CONFLICT_KINDS if pairs[k]},
        variants_by_op={k: (v[0], v[1]) for k, v in sorted(by_op.items())},
    )


def format_scores(scores: Scores) -> list[str]:
    lines = [
        f"entries                 {scores.entries:>9,}",
        f"merge precision         {scores.merge_precision:>9.4f}"
        f"  ({scores.merge_pairs_correct:,} of {scores.merge_pairs_predicted:,} predicted pairs)",
        f"merge recall            {scores.merge_recall:>9.4f}"
        f"  ({scores.merge_pairs_correct:,} of {scores.merge_pairs_planted:,} planted pairs)",
        f"supersession precision  {scores.supersession_precision:>9.4f}"
        f"  ({scores.superseded_correct:,} of {scores.superseded_predicted:,} superseded)",
        f"supersession recall     {scores.supersession_recall:>9.4f}"
        f"  ({scores.superseded_correct:,} of {scores.superseded_planted:,} planted)",
        f"conflict false merges   {scores.false_merge_rate:>9.4f}"
        f"  ({scores.false_merges:,} of {sum(scores.conflict_pairs.values()):,} pairs)",
        f"conflict detection      {scores.conflict_detection_recall:>9.4f}",
        "  kind        pairs  merged  detected",
    ]
    for kind, n in scores.conflict_pairs.items():
        lines.append(
            f"  {kind:<10} {n:>6} {scores.conflict_false_merges[kind]:>7}"
            f" {scores.conflicts_detected[kind] / n:>9.3f}"
        )
    lines.append("  restatement    merged with base")
    for label, (together, total) in scores.variants_by_op.items():
        lines.append(f"  {label:<20} {together / total:>6.3f}  ({together:,} of {total:,})")
    return lines


def all_pairs_baseline(entries: Sequence[PlanEntry]) -> tuple[int, float]:
    """The funnel without its candidate stage: every pair through conflict_guard.compare.
    Returns (pairs compared, seconds), reading the texts included."""
    started = time.perf_counter()
    facts = [read_fact_text(e.content) for e in entries]
    pairs = 0
    for i, left in enumerate(facts):
        for right in facts[i + 1 :]:
            compare(left, right)
        pairs += len(facts) - i - 1
    return pairs, time.perf_counter() - started
