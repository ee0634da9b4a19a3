"""The words update detection reads (memory/sameness/updates.py): words of change
("now", "moves to", "no longer", "correction"), the words a later text names a replaced
value with ("changed from 4", "instead of Tuesday"), and the words that are never a
fact's subject (they say a value changed, or name the attribute whose value is stated).

Closed lists: a word missing here only makes an update a conflict (no word of change) or
two facts look like two subjects, never two facts one.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


CUE_PHRASES = [
    r"now", r"no longer", r"not \w+ any ?more", r"any ?more", r"instead(?: of)?",
    r"(?:has |have |was |were |got |is |are )?(?:moved|moves|moving|move) (?:to|up|back|from)",
    r"(?:has |have |was |were |got |is |are )?(?:changed|changes|changing|change) (?:to|from)",
    r"(?:switched|switches|switching|switch) (?:to|from)", r"(?:updated|update) to",
    r"correction", r"corrected", r"update[sd]?\s*[:\-]", r"to correct", r"actually",
    r"pushed (?:back|out|to)",
    r"postponed", r"delayed", r"rescheduled", r"brought forward", r"moved up",
    r"(?:raised|lowered|increased|decreased|reduced|bumped|dropped|cut|upgraded|downgraded|"
    r"promoted|demoted|escalated|de-?escalated|extended|shortened) (?:to|from|up|down)",
    r"upgraded", r"downgraded", r"escalated", r"reopened", r"re-opened",
    r"has been (?:resolved|closed|fixed|completed|cancell?ed|merged|shipped|approved|"
    r"rejected|reassigned|replaced|moved|changed|rescheduled|postponed)",
    r"(?:took|takes|taking|has taken) over", r"(?:handed|hands|handing) (?:over|off)",
    r"replaced by", r"replaces", r"in place of", r"from now on", r"going forward",
    r"(?:starting|effective|beginning) (?:from |on |next |this |today|tomorrow|monday|"
    r"tuesday|wednesday|thursday|friday|saturday|sunday|immediately|now)",
    r"as of (?:today|now|this|next|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|\d)", r"no more", r"these days", r"new (?:address|lead|owner|time|date|"
    r"deadline|status|priority|diet|manager|contact|home|place)", r"(?:is|are) back to",
    r"went back to",
]  # fmt: skip
CUE = re.compile(rf"(?<![\w-])(?:{'|'.join(CUE_PHRASES)})(?![\w-])", re.IGNORECASE)
# Words that say a value changed, or name the attribute whose value is stated: never
# the subject ("the deadline was pushed back" is about what is due, not "deadline").
NOT_SUBJECT = _words(
    """
    now longer instead anymore any more moved moves moving move changed changes
    changing change switched switches switching switch updated update correction
    corrected correct actually pushed postponed delayed rescheduled brought raised
    lowered increased decreased reduced bumped dropped cut upgraded downgraded promoted
    demoted escalated extended shortened reopened took takes taking taken handed hands
    handing replaced replaces place going starting effective beginning became become
    turned again heads new latest current currently since from to at on in of for by
    with has have had will would should shall can could may might must be been being do
    does did done get gets got what when where how then than all any some every each
    our your their his her they we you he she them us it its also just still today
    tomorrow yesterday week weeks day days month months year years next last this that
    these those here there instead will going is are was were am not no never don t
    doesn didn isn aren wasn weren won s m re ve ll d time times start starts started
    begins begin began held happens happen meets scheduled schedule due deadline date
    dates until lead leads leader leading led owner owns own owned manager manages
    managed managing head headed runs run running charge responsible contact point
    assignee assigned maintainer maintains handles handling coordinator coordinates
    chair chairs dri address lives live living lived home located location based
    resides reside residing relocated relocating relocates stays stay staying apartment
    flat diet eats eat eating ate dietary status state marked set priority prio urgency
    level
    """
)
# Words of a role someone holds: a person's name changing beside one is a new holder.
ROLE_WORDS = _words(
    """
    lead leads leader leading led owner owns owned manager manages managed managing
    head heads headed runs running charge responsible contact assignee assigned
    maintainer maintains coordinator coordinates chair chairs dri approver approves
    """
)
# The speaker: "I", "my", the agent's "user" are one subject.
SELF = _words("i me my mine myself im user")
OLD_VALUE = re.compile(
    r"\b(?:(?:changed|moved|switched|updated|raised|lowered|increased|decreased|reduced|"
    r"bumped|pushed back|pushed|upgraded|downgraded|promoted|demoted) from|instead of|"
    r"rather than|replacing|previously|formerly|used to be)\b[^.;()\u2014,]*?"
    r"(?=\s+to\b|[.;,()\u2014]|$)|\((?:was|previously|formerly)\b[^)]*\)",
    re.IGNORECASE,
)
_CUE_MOMENT = re.compile(
    r"\b(?:today|tomorrow|now|this|next|immediately|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|\d+)\b",
    re.IGNORECASE,
)


def cue_key(cue: str) -> str:
    """A cue without the moment it names: "as of Tuesday" and "as of Wednesday" are one
    cue, so a date changed under it is no word of change."""
    return " ".join(_CUE_MOMENT.sub("*", cue.casefold()).split())
