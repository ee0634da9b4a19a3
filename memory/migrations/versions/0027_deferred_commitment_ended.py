"""A deferred commitment that ends tells the listener, so its horizon stops waiting.

A time commitment due beyond the arming horizon has no workflow yet: the memoryRef's
CommitmentHorizonWorkflow (or the fleet's) sleeps until half a horizon before the
earliest such instant, and its details in the Temporal UI name that instant. When that
commitment ends before it is started (its entry forgotten, expired or deleted, the
commitment cancelled or superseded), nothing told the horizon: it kept waiting for, and
announcing, the due time of a promise that no longer exists.

These row triggers NOTIFY ``agent_memory_deferred_ended`` with the memoryRef at commit
when an armed, unstarted time commitment leaves ``armed`` or is deleted; the change
listener (runtime/change_listener.py) signals that memoryRef's horizon and the fleet's,
whose next pass re-reads what is still deferred. The payload is a memoryRef, as the
change channel's: never content.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-06
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHANNEL = "agent_memory_deferred_ended"  # memory/commitments/change_feed.py
_DEFERRED = "OLD.state = 'armed' AND OLD.armed_at IS NULL AND OLD.condition = 'time'"

_FUNCTION = f"""
CREATE FUNCTION commitments_deferred_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', OLD.memory_ref);
    RETURN NULL;
END;
$$
"""


def upgrade() -> None:
    op.execute(_FUNCTION)
    op.execute(
        "CREATE TRIGGER commitments_deferred_ended AFTER UPDATE OF state ON commitments "
        f"FOR EACH ROW WHEN ({_DEFERRED} AND NEW.state <> 'armed') "
        "EXECUTE FUNCTION commitments_deferred_ended()"
    )
    op.execute(
        "CREATE TRIGGER commitments_deferred_deleted AFTER DELETE ON commitments "
        f"FOR EACH ROW WHEN ({_DEFERRED}) "
        "EXECUTE FUNCTION commitments_deferred_ended()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS commitments_deferred_deleted ON commitments")
    op.execute("DROP TRIGGER IF EXISTS commitments_deferred_ended ON commitments")
    op.execute("DROP FUNCTION IF EXISTS commitments_deferred_ended()")
