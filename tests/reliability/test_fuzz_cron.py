"""Hostile cron strings against the one cron parser there is, the Temporal server:
`memoryctl schedule create --cron X` on the session's dev server. Each either creates
the schedule (then deleted) or fails in one line naming --cron's field (exit 2), with
no traceback and without repeating an expression that is not a plain printable one."""

from __future__ import annotations

import asyncio
import itertools
import uuid

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from memoryctl.dream_schedules import schedule_id_for
from tests.support.fuzzing import fuzz_settings
from tests.support.hostile_input import MARKER, hostile_text
from tests.support.memoryctl_inprocess import memoryctl

_numbers = itertools.count()

FIELD = st.sampled_from(
    ["*", "0", "59", "60", "61", "-1", "*/0", "*/5", "1-5", "5-1", "MON", "FOO", "?", "L", "#", ""]
)
crons = st.one_of(
    st.lists(FIELD, min_size=1, max_size=8).map(" ".join),
    st.sampled_from(
        [
            "@every 0s",
            "@every -5m",
            "@every 1h",
            "@daily",
            "@reboot",
            "@yearly",
            "CRON_TZ=Nowhere/Here 0 3 * * *",
            "CRON_TZ=UTC 0 3 * * *",
            "0 3 * * *",
            "0 3 * * * * * *",
            "\t0 3 * * *\n",
            "0 3 * * * # note",
        ]
    ),
    hostile_text.map(lambda text: text.replace("\x00", "")),
    st.text(max_size=300).map(lambda text: text.replace("\x00", "")),
)


@pytest.fixture
def cron_env(temporal_env: WorkflowEnvironment, database_url: str) -> dict[str, str]:
    address = temporal_env.client.service_client.config.target_host
    return {"DATABASE_URL": database_url, "TEMPORAL_ADDRESS": address, "COLUMNS": "200"}


@fuzz_settings()
@given(cron=crons)
async def test_hostile_cron_strings_create_a_schedule_or_fail_naming_cron(
    temporal_env: WorkflowEnvironment, cron_env: dict[str, str], cron: str
) -> None:
    ref = f"mem://fzcron-{uuid.uuid4().hex[:6]}/agent-{next(_numbers)}"
    args = ["schedule", "create", "--memory-ref", ref, "--cron", cron]
    ran = await asyncio.to_thread(memoryctl, args, cron_env)
    assert ran.crash is None, repr(ran.crash)
    output = ran.stdout + ran.stderr
    assert "Traceback" not in output, output
    assert MARKER not in output, (cron, output)
    handle = temporal_env.client.get_schedule_handle(schedule_id_for(ref))
    if ran.status == 0:
        event("created")
        await handle.delete()
        return
    event("refused")
    lines = ran.stderr.splitlines()
    assert ran.status == 2 and len(lines) == 1, (cron, ran.status, ran.stderr)
    assert lines[0].startswith("error: cron: ") or "--cron" in lines[0], lines[0]
    with pytest.raises(RPCError) as missing:
        await handle.describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND
