"""LoCoMo conversations as retrieval material, and the retrieval measures read off them.

The data is never in this repository: it is read from ``../shared/data/locomo-dev/``
(its README gives the shape and the scoring rules this module follows). One document per
turn, ``"<speaker>: <text>"`` plus ``" [shared <caption>]"`` when a photo was shared; one
document per session, its turns joined; each question's evidence as turn ids
(``"D<session>:<turn>"``), the malformed ones mended the one way they can be read.

Splits are fixed before anything is tuned: conv-26, conv-42 and conv-47 are the tuning
half, conv-48 and conv-49 the held-out half (figures are reported for both and overall).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo-dev"
TUNE = ("conv-26", "conv-42", "conv-47")
HOLDOUT = ("conv-48", "conv-49")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    id: str  # the dia_id, "D<session>:<turn>"
    session: int
    speaker: str
    text: str
    said_at: datetime | None


@dataclass(frozen=True)
class Question:
    key: str  # "<conversation>#<index in qa>"
    text: str
    category: int
    evidence: tuple[str, ...]

    @property
    def sessions(self) -> set[int]:
        return {session_of(turn) for turn in self.evidence}


@dataclass
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def session_texts(self) -> dict[int, str]:
        """One document per session: its turns in order, one per line."""
        sessions: dict[int, list[str]] = {}
        for turn in self.turns:
            sessions.setdefault(turn.session, []).append(turn.text)
        return {number: "\n".join(lines) for number, lines in sessions.items()}

    def session_dates(self) -> dict[int, datetime | None]:
        """When each session took place (LoCoMo's session date and time)."""
        return {turn.session: turn.said_at for turn in self.turns}


def session_of(turn_id: str) -> int:
    return int(turn_id[1:].split(":")[0])


def _said_at(raw: str | None) -> datetime | None:
    """LoCoMo's session time, e.g. "1:56 pm on 8 May, 2023"."""
    if not raw:
        return None
    try:
        return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return None


def _evidence(raw: Iterable[str], known: set[str]) -> tuple[str, ...]:
    found: list[str] = []
    for item in raw:
        for part in str(item).split(";"):
            match = _EVIDENCE.search(part.strip())
            if match:
                turn = f"D{int(match.group(1))}:{int(match.group(2))}"
                if turn in known and turn not in found:
                    found.append(turn)
    return tuple(found)


def load_conversation(path: Path) -> Conversation:
    data = json.loads(path.read_text())
    body = data.get("conversation", data)
    conversation = Conversation(path.stem, (body["speaker_a"], body["speaker_b"]))
    numbers = sorted(int(m.group(1)) for key in body if (m := _SESSION_KEY.match(key)))
    for number in numbers:
        said_at = _said_at(body.get(f"session_{number}_date_time"))
        for turn in body[f"session_{number}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shared {turn['blip_caption']}]"
            conversation.turns.append(Turn(turn["dia_id"], number, turn["speaker"], text, said_at))
    known = {turn.id for turn in conversation.turns}
    for index, qa in enumerate(data["qa"]):
        evidence = _evidence(qa.get("evidence") or (), known)
        if evidence:
            conversation.questions.append(
                Question(f"{path.stem}#{index}", qa["question"], int(qa["category"]), evidence)
            )
    return conversation


def load(data: Path = DEFAULT_DATA) -> list[Conversation]:
    files = sorted(data.glob("conv-*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo conversations in {data} (see its README)")
    return [load_conversation(path) for path in files]


# ---------------------------------------------------------------------- measures


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return 1.0 if any(item in relevant for item in ranked[:k]) else 0.0


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    gain = sum(1 / math.log2(rank + 2) for rank, item in enumerate(ranked[:k]) if item in relevant)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(relevant), k)))
    return gain / ideal if ideal else 0.0


def first_sessions(ranked_turns: Sequence[str]) -> list[str]:
    """A ranking of turns read as the sessions they belong to, first occurrence."""
    return list(dict.fromkeys(f"S{session_of(turn)}" for turn in ranked_turns))


@dataclass(frozen=True)
class Scores:
    """One question's measures: turn view, turn ranking read as sessions, session view."""

    turn_r5: float
    turn_r10: float
    turn_ndcg10: float
    session_r5: float
    session_view_r5: float | None


def score(question: Question, turns: Sequence[str], sessions: Sequence[str] | None) -> Scores:
    relevant = set(question.evidence)
    relevant_sessions = {f"S{n}" for n in question.sessions}
    return Scores(
        recall_at(turns, relevant, 5),
        recall_at(turns, relevant, 10),
        ndcg_at(turns, relevant, 10),
        recall_at(first_sessions(turns), relevant_sessions, 5),
        recall_at(sessions, relevant_sessions, 5) if sessions is not None else None,
    )


def summary(scores: Sequence[Scores]) -> dict[str, float | int]:
    def mean(values: Sequence[float]) -> float:
        return round(sum(values) / len(values), 3) if values else 0.0

    views = [s.session_view_r5 for s in scores if s.session_view_r5 is not None]
    return {
        "questions": len(scores),
        "turn_r5": mean([s.turn_r5 for s in scores]),
        "turn_r10": mean([s.turn_r10 for s in scores]),
        "turn_ndcg10": mean([s.turn_ndcg10 for s in scores]),
        "session_r5": mean([s.session_r5 for s in scores]),
        "session_view_r5": mean(views),
    }
