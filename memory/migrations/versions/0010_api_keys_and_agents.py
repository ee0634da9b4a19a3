"""The HTTP surface's own state: API keys and agent manifests.

- api_keys: one row per key. A key maps to exactly one tenant (CTI-1 at the edge). Only
  the SHA-256 of the key's secret half is stored: the secret is 32 random bytes, so a
  fast hash is as strong as a slow one here, and a request authenticates in one index
  probe. A revoked key keeps its row (``revoked_at``) so ``keys list`` shows its history.
- agent_manifests: the memoryShape an agent declares (RFC 0080 §C). GET /v1/agents
  projects it against the live capability model to stamp memoryDegraded.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("key_id", sa.Text, primary_key=True),
        sa.Column("tenant", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("secret_sha256", sa.Text, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("revoked_at", TS),
        sa.Column("last_used_at", TS),
    )
    op.create_index("ix_api_keys_tenant", "api_keys", ["tenant"])
    op.create_table(
        "agent_manifests",
        sa.Column("tenant", sa.Text, primary_key=True),
        sa.Column("agent_id", sa.Text, primary_key=True),
        sa.Column("memory_shape", JSONB, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("agent_manifests")
    op.drop_index("ix_api_keys_tenant", table_name="api_keys")
    op.drop_table("api_keys")
