"""A realistic demo memory: two tenants' agents, duplicated notes, long-term facts
restated, contradicted and re-keyed, pinned facts and registered BYOK secrets (some of
them sitting in legacy entries written before the secret was registered, which is what
SR-1 carry-forward in the dream must catch), and a weekly routine: the support agent was
asked for the same summary on each of the last four Mondays, which the first dream
proposes to automate (an inert proposal: nothing runs until someone applies it)."""

from __future__ import annotations

import functools
import json
import random
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory.redaction.vault import StaticSecretVault, registry_for_tenant
from memory.store import PostgresMemoryStore
from schemas.memory_entry import NewMemoryEntry, Priority, Tier


@dataclass(frozen=True)
class DemoTenant:
    memory_ref: str
    persona: str
    entries_per_run: int

    @property
    def tenant(self) -> str:
        return self.memory_ref.split("/")[2]


TENANTS = (
    DemoTenant("mem://acme/support-agent", "support", 180),
    DemoTenant("mem://globex/sales-agent", "sales", 120),
)

_PEOPLE = ["Dana", "Ravi", "Mei", "Jonas", "Aisha", "Tomás", "Priya", "Lena", "Omar", "Kenji"]
_COMPANIES = ["Northwind", "Contoso", "Fabrikam", "Initech", "Umbrella", "Hooli", "Vandelay"]
_TEMPLATES = {
    "support": [
        ("{p} from {c} prefers email follow-ups over phone calls.", ["preference", "contact"]),
        ("{c} reported that invoice exports time out after 30 seconds.", ["bug", "billing"]),
        ("Escalated {c}'s SSO outage to the platform team; {p} is the contact.", ["incident"]),
        ("{p} asked to be reminded on Friday about the renewal quote for {c}.", ["commitment"]),
        ("{c} is on the enterprise plan with a 99.9% uptime SLA.", ["account", "sla"]),
        ("Follow up with {p} when the refund for {c} clears.", ["commitment", "billing"]),
        ("{p} at {c} found the new dashboard confusing; wants a walkthrough.", ["feedback"]),
        ("Weekly support sync moved to Thursdays at 10:00.", ["meeting"]),
    ],
    "sales": [
        ("{p} at {c} is evaluating us against two competitors this quarter.", ["pipeline"]),
        ("{c}'s budget cycle closes in March; {p} signs off on tooling.", ["account"]),
        ("Sent {p} the security questionnaire for {c}.", ["security", "pipeline"]),
        ("{p} wants a demo of the audit log features before the {c} renewal.", ["demo"]),
        ("Pricing call with {c} went well; {p} asked for a 3-year quote.", ["pricing"]),
        ("Remind me Monday to send {p} the {c} case study.", ["commitment"]),
    ],
}
# Long-term facts the agents learn again every day, restated in other words, with one
# look-alike that disagrees and one keyed value re-keyed with a new value: what the
# dream's consolidation pass merges, records as a conflict and supersedes.
_FACTS = {
    "support": [
        "Northwind prefers invoices in EUR.",
        "Note: Northwind prefers invoices in EUR",
        "NORTHWIND PREFERS INVOICES IN EUR",
        "The Contoso trial lasts 14 days.",
        "The Contoso trial lasts 21 days.",
    ],
    "sales": [
        "Initech signs contracts only after a security review.",
        "FYI, Initech signs contracts only after a security review",
        "Hooli's budget owner is Priya.",
        "The Vandelay discount is 10 percent.",
        "The Vandelay discount is 15 percent.",
    ],
}
_PLAN_TIERS = ("Team", "Business", "Enterprise")
# The same slot spelled the ways clients write keys; one spelling per day.
_PLAN_KEYS = ("plan_tier", "planTier", "plan-tier", "PlanTier")
_LEGACY_SECRET_NOTE = (
    "Temporary API credential for the {c} sandbox: {secret} (rotate after the demo)."
)


def load_or_create_secrets(path: Path) -> dict[str, dict[str, str]]:
    """The BYOK vault file the worker reads (AGENT_MEMORY_SECRETS_FILE)."""
    if path.exists():
        loaded: dict[str, dict[str, str]] = json.loads(path.read_text())
        return loaded
    vault = {
        "acme": {"stripe-sandbox-key": "sk_test_" + secrets.token_hex(12)},
        "globex": {"crm-api-token": "crm_" + secrets.token_hex(14)},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(vault, indent=2))
    path.chmod(0o600)
    return vault


def _notes(tenant: DemoTenant, rng: random.Random) -> list[NewMemoryEntry]:
    templates = _TEMPLATES[tenant.persona]
    entries: list[NewMemoryEntry] = []
    while len(entries) < tenant.entries_per_run:
        template, tags = rng.choice(templates)
        text = template.format(p=rng.choice(_PEOPLE), c=rng.choice(_COMPANIES))
        repeats = 3 if rng.random() < 0.08 else 1  # agents re-learn the same fact
        for _ in range(repeats):
            entries.append(
                NewMemoryEntry(
                    content=text,
                    tags=tuple(tags),
                    tier=Tier.EPISODIC if rng.random() < 0.7 else Tier.WORKING,
                    pinned=rng.random() < 0.01,
                    priority=Priority.HIGH if "commitment" in tags else Priority.NORMAL,
                )
            )
    return entries[: tenant.entries_per_run]


def _facts(tenant: DemoTenant, run_number: int) -> list[NewMemoryEntry]:
    facts = [
        NewMemoryEntry(content=text, tags=("fact",), tier=Tier.SEMANTIC)
        for text in _FACTS[tenant.persona]
    ]
    tier = _PLAN_TIERS[run_number % len(_PLAN_TIERS)]
    key = _PLAN_KEYS[run_number % len(_PLAN_KEYS)]
    facts.append(
        NewMemoryEntry(
            content=f"Plan tier: {tier}",
            tags=("fact", "billing"),
            tier=Tier.SEMANTIC,
            namespace="account",
            key=key,
        )
    )
    return facts


# The same request on each of the last four Mondays, around 09:00 UTC, worded as people
# word it again: one proposal ("run the agent every Monday at 09:00").
_WEEKLY_ROUTINE = (
    "Send Dana the weekly escalations summary.",
    "Could you send Dana the weekly escalations summary?",
    "Please send Dana the weekly escalations summary",
    "send dana the weekly escalations summary, thanks!",
)
ROUTINE_WEEKS = len(_WEEKLY_ROUTINE)


def routine_mondays(now: datetime) -> list[datetime]:
    """The Mondays before ``now``'s week, oldest first, a few minutes past 09:00 UTC."""
    last = (now - timedelta(days=now.weekday() + 7)).replace(
        hour=9, minute=0, second=0, microsecond=0
    )
    return [
        last - timedelta(weeks=ROUTINE_WEEKS - 1 - week) + timedelta(minutes=3 * week)
        for week in range(ROUTINE_WEEKS)
    ]


def _as_of(instant: datetime) -> datetime:
    return instant


async def seed_weekly_routine(store: PostgresMemoryStore, memory_ref: str) -> int:
    """The routine's requests, each written as of its Monday: a store whose clock reads
    that instant, as the store would have stamped it then."""
    moments = routine_mondays(datetime.now(UTC))
    for week, (text, said_at) in enumerate(zip(_WEEKLY_ROUTINE, moments, strict=True), 1):
        then = PostgresMemoryStore(
            store.engine,
            clock=functools.partial(_as_of, said_at),
            intent_links=store.db.intent_links,
            embedder=None,  # the worker's re-embed catches these up
        )
        # Fixed ids, so the proposal's id is too (README: memoryctl proposals apply ...).
        entry = NewMemoryEntry(content=text, tags=("request",), id=f"weekly-request-{week}")
        await then.put(memory_ref, entry)
    return ROUTINE_WEEKS


async def seed_demo_memory(
    store: PostgresMemoryStore, vault: dict[str, dict[str, str]], run_number: int
) -> dict[str, int]:
    """Add one day's worth of memory per tenant; returns entries written per ref."""
    rng = random.Random(run_number)
    seed_vault = StaticSecretVault(vault)
    written: dict[str, int] = {}
    for tenant in TENANTS:
        tenant_name = tenant.tenant
        registry = registry_for_tenant(seed_vault, tenant_name, f"seed-{run_number}")
        entries = _notes(tenant, rng) + _facts(tenant, run_number)
        stored = await store.put_many(tenant.memory_ref, entries, secrets=registry)
        # A legacy note written before its secret was registered: stored as plaintext,
        # so only the dream's SR-1 carry-forward keeps it out of the archive.
        tenant_secrets = seed_vault.secrets_for(tenant_name)
        for secret_id, value in tenant_secrets.items():
            legacy = _LEGACY_SECRET_NOTE.format(c=rng.choice(_COMPANIES), secret=value)
            await store.put(
                tenant.memory_ref,
                NewMemoryEntry(
                    content=legacy, tags=("credentials",), metadata={"secretId": secret_id}
                ),
            )
        written[tenant.memory_ref] = len(stored) + len(tenant_secrets)
    if run_number == 1:  # the first day seeds the past four weeks' routine
        written[TENANTS[0].memory_ref] += await seed_weekly_routine(store, TENANTS[0].memory_ref)
    return written
