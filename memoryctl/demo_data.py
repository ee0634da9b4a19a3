"""A realistic demo memory: two tenants' agents, duplicated notes, long-term facts
restated, contradicted and re-keyed, pinned facts and registered BYOK secrets (some of
them sitting in legacy entries written before the secret was registered, which is what
SR-1 carry-forward in the dream must catch)."""

from __future__ import annotations

import json
import random
import secrets
from dataclasses import dataclass
from pathlib import Path

from memory.store import PostgresMemoryStore
from memory.vault import StaticSecretVault, registry_for_tenant
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
    return written
