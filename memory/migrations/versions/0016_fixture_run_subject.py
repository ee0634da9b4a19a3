"""The key that started a fixture run (issue 22, item 8): openwop v2's RunSnapshot names
its owner's subject, ``{issuer, subjectId, tenant, lane: api-key, kind: workload}``, and
``subjectId`` is the starting key's public id (never its secret). Runs recorded before
this revision keep null and read as a legacy subject.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("fixture_runs", sa.Column("subject_id", sa.Text))


def downgrade() -> None:
    op.drop_column("fixture_runs", "subject_id")
