"""The shared vocabulary benchmarks draw realistic agent-memory text from."""

from __future__ import annotations

import random

PEOPLE = [
    "Priya",
    "Marcus",
    "Elena",
    "Tomás",
    "Aiko",
    "Jordan",
    "Fatima",
    "Liam",
    "Sofia",
    "Chen Wei",
    "Noah",
    "Amara",
]
COMPANIES = [
    "Acme Corp",
    "Globex",
    "Initech",
    "Umbrella Health",
    "Stark Logistics",
    "Wayne Analytics",
    "Hooli",
    "Vandelay Imports",
    "Northwind",
    "Contoso",
]
TOPICS = [
    "the Q3 renewal",
    "the onboarding flow",
    "the SSO rollout",
    "the data-retention policy",
    "a disputed invoice",
    "the new pricing page",
    "API rate limits",
    "the migration to PostgreSQL 17",
    "the weekly status report",
    "the mobile beta",
    "the security questionnaire",
    "the churn dashboard",
    "the EU data-residency request",
]
PREFERENCES = [
    "short bullet-point summaries over long prose",
    "to be contacted by email rather than Slack",
    "meetings after 10:00 CET and never on Fridays",
    "metric units in every report",
    "answers that cite the source document",
    "Python examples over JavaScript",
    "not to be copied on billing threads",
    "a written agenda at least a day before any call",
    "dates in ISO 8601 format",
    "that drafts are shared as Google Docs, not attachments",
]
TOOLS = ["Jira", "Linear", "Salesforce", "HubSpot", "Zendesk", "Notion", "Snowflake", "Datadog"]
PURPOSES = ["ticketing", "the sales pipeline", "support", "internal docs", "analytics", "alerting"]
MONTHS = ["January", "March", "June", "September", "October", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
DECISIONS = [
    "ship behind a feature flag first",
    "postpone until the audit is done",
    "offer a 10% discount for a two-year term",
    "escalate to the account executive",
    "keep the current plan and revisit next quarter",
    "split the work into two milestones",
]
ACTIONS = [
    "send the revised quote",
    "share the architecture diagram",
    "book a follow-up call",
    "update the runbook",
    "confirm the contract dates",
    "file the bug with repro steps",
    "draft the customer FAQ",
]


def fill(template: str, rng: random.Random, **extra: object) -> str:
    """Format a sentence template with random names, companies, dates and so on."""
    return template.format(
        person=rng.choice(PEOPLE),
        person2=rng.choice(PEOPLE),
        company=rng.choice(COMPANIES),
        topic=rng.choice(TOPICS),
        pref=rng.choice(PREFERENCES),
        tool=rng.choice(TOOLS),
        purpose=rng.choice(PURPOSES),
        month=rng.choice(MONTHS),
        day=rng.choice(DAYS),
        decision=rng.choice(DECISIONS),
        action=rng.choice(ACTIONS),
        seats=rng.choice([12, 25, 40, 150, 600, 2400]),
        date=f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        **extra,
    )
