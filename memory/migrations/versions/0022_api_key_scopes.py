"""API keys carry scopes: the routes that say so require one.

A key still belongs to exactly one tenant; its scopes (RFC 0049 style strings such as
``proposals:apply``, memory/tenants/api_keys.py checks their grammar) say what more it may do.
Routes gate on a scope only where they say so, so every existing key keeps what it could
do: the column defaults to no scopes.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "api_keys",
        sa.Column("scopes", ARRAY(sa.Text), nullable=False, server_default="{}"),
    )


def downgrade() -> None:
    op.drop_column("api_keys", "scopes")
