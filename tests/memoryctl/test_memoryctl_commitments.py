"""memoryctl commitments, run as a user runs it (a subprocess against the test's own
database and the dev server): infer waits for the workflow and lists unparsable entries
by id, each with the parser's reason (a category, never the entry's words), list and
show print ids, states and instants (show alone serves the intention), show, confirm
and cancel take the id as an argument as every other show does, show prints one
``label: value`` line each and no Python reprs, cancel ends the commitment in the store
and its workflow, and bad input is one line with a non-zero exit."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from zoneinfo import ZoneInfo

from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore
from schemas.commitments import commitment_workflow_id
from schemas.memory_ref import parse_memory_ref
from tests.memoryctl.test_memoryctl_forget import ok, one_line_error
from tests.support.factories import note, unique_ref
from tests.support.waiting import closed_status

# Within the arming horizon, so inference starts its workflow for the cancel to end.
INTENTION = "Remind me in 3 hours to ask Marguerite about the Ostrander lease"


def memoryctl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", "commitments", *args],
        env={**os.environ, "COLUMNS": "200", **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_infer_list_show_and_cancel(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    database_url: str,
) -> None:
    ref = unique_ref()
    source = await store.put(ref, note(INTENTION))
    vague = await store.put(ref, note("Remind me about the thing with the vendor"))
    env = {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENT_MEMORY_TASK_QUEUE": worker_task_queue,
    }
    inferred = json.loads(
        ok(await asyncio.to_thread(memoryctl, "infer", "--memory-ref", ref, "--json", env=env))
    )
    assert inferred["inference"]["created"] == 1
    assert inferred["inference"]["unparsableIds"] == [vague.id]
    assert inferred["armed"]["started"] == 1

    listed = ok(await asyncio.to_thread(memoryctl, "list", "--memory-ref", ref, "--json", env=env))
    (row,) = json.loads(listed)
    assert (row["memoryId"], row["state"], row["condition"]) == (source.id, "armed", "time")
    assert "Marguerite" not in listed and "Ostrander" not in listed
    cid = row["commitmentId"]

    shown = json.loads(
        ok(await asyncio.to_thread(memoryctl, "show", "--memory-ref", ref, cid, "--json", env=env))
    )
    assert shown["intention"] == INTENTION
    assert shown["spec"]["kind"] == "once"

    # The table reads at 80 columns: every line fits, and the id is whole to copy.
    narrow = {**env, "COLUMNS": "80"}
    table = ok(await asyncio.to_thread(memoryctl, "list", "--memory-ref", ref, env=narrow))
    assert all(len(line) <= 80 for line in table.splitlines()), table
    (line,) = [line for line in table.splitlines() if cid in line]
    assert "armed" in line
    details = ok(await asyncio.to_thread(memoryctl, "show", "--memory-ref", ref, cid, env=narrow))
    assert f"id: {cid}" in details and f"entry: {source.id}" in details

    cancelled = ok(await asyncio.to_thread(memoryctl, "cancel", "--memory-ref", ref, cid, env=env))
    assert f"{cid}: cancelled" in cancelled
    (after,) = await store.commitments.list(ref)
    assert after.state == "cancelled"
    handle = temporal_env.client.get_workflow_handle(commitment_workflow_id(cid))
    assert await closed_status(handle) == WorkflowExecutionStatus.CANCELED

    # Another tenant's ref finds nothing, whatever the id.
    other = unique_ref()
    missing = await asyncio.to_thread(memoryctl, "show", "--memory-ref", other, cid, env=env)
    assert cid in one_line_error(missing, 1)
    assert "Marguerite" not in missing.stdout + missing.stderr


async def test_bad_input_is_one_line_and_a_non_zero_exit(
    store: PostgresMemoryStore, database_url: str
) -> None:
    env = {"DATABASE_URL": database_url}
    bad_ref = await asyncio.to_thread(memoryctl, "list", "--memory-ref", "mem://../x", env=env)
    assert "memoryRef" in one_line_error(bad_ref, 2) or "segments" in bad_ref.stderr
    bad_zone = await asyncio.to_thread(
        memoryctl, "timezone", "--tenant", "acme", "Mars/Olympus", env=env
    )
    assert "timeZone" in one_line_error(bad_zone, 2)
    set_zone = await asyncio.to_thread(
        memoryctl, "timezone", "--tenant", "acme", "Europe/Berlin", env=env
    )
    assert ok(set_zone).strip() == "Europe/Berlin"
    assert await store.commitments.time_zone("acme") == "Europe/Berlin"
    ref = unique_ref()
    assert parse_memory_ref(ref)
    no_such = await asyncio.to_thread(memoryctl, "cancel", "--memory-ref", ref, "cmt-0", env=env)
    one_line_error(no_such, 1)


def _env(temporal_env: WorkflowEnvironment, worker_task_queue: str, database_url: str) -> dict:
    return {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENT_MEMORY_TASK_QUEUE": worker_task_queue,
    }


async def test_show_confirm_and_cancel_take_the_id_as_an_argument(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    database_url: str,
) -> None:
    """Like `proposals show --tenant T ID` and `memory get --memory-ref REF ID`."""
    env = _env(temporal_env, worker_task_queue, database_url)
    ref = unique_ref()
    await store.commitments.update_settings(parse_memory_ref(ref).tenant, require_confirmation=True)
    await store.put(ref, note(INTENTION))
    ok(await asyncio.to_thread(memoryctl, "infer", "--memory-ref", ref, env=env))
    (row,) = await store.commitments.list(ref)
    cid = row.commitment_id
    assert row.state == "proposed"

    for verb in ("show", "confirm", "cancel"):
        usage = ok(await asyncio.to_thread(memoryctl, verb, "--help", env=env))
        assert "--memory-ref" in usage and " ID" in usage, usage
        assert "{ID}" in usage and "--id" not in usage, usage  # required, as in proposals
    shown = ok(await asyncio.to_thread(memoryctl, "show", "--memory-ref", ref, cid, env=env))
    assert f"id: {cid}" in shown
    confirmed = ok(await asyncio.to_thread(memoryctl, "confirm", "--memory-ref", ref, cid, env=env))
    assert f"{cid}: armed" in confirmed
    cancelled = ok(await asyncio.to_thread(memoryctl, "cancel", "--memory-ref", ref, cid, env=env))
    assert f"{cid}: cancelled" in cancelled
    # --id is gone: refused in one line, exit 2, like any option the command lacks.
    legacy = await asyncio.to_thread(memoryctl, "show", "--memory-ref", ref, "--id", cid, env=env)
    assert "--id" in one_line_error(legacy, 2)
    # An id not of the grammar, or none at all: one line naming ID, exit 2.
    bad = await asyncio.to_thread(memoryctl, "show", "--memory-ref", ref, "nope", env=env)
    assert "ID" in one_line_error(bad, 2) and "nope" not in bad.stderr
    missing = await asyncio.to_thread(memoryctl, "cancel", "--memory-ref", ref, env=env)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def _labels(shown: str) -> list[str]:
    return [line.split(":", 1)[0] for line in shown.splitlines() if line and line[0] != " "]


def _value(shown: str, label: str) -> str:
    (value,) = [line.split(": ", 1)[1] for line in shown.splitlines() if line.startswith(label)]
    return value


async def test_show_prints_each_label_once_and_no_python_reprs(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    database_url: str,
) -> None:
    env = _env(temporal_env, worker_task_queue, database_url)
    ref = unique_ref()
    await store.commitments.set_time_zone(parse_memory_ref(ref).tenant, "Europe/Berlin")
    once = await store.put(ref, note(INTENTION))
    weekly = await store.put(ref, note("Remind me every Monday at 9:00 to water the ficus"))
    watch = await store.put(ref, note("Remind me when the SOC2 report is filed"))
    ok(await asyncio.to_thread(memoryctl, "infer", "--memory-ref", ref, env=env))
    by_entry = {row.memory_id: row for row in await store.commitments.list(ref)}

    async def show(entry_id: str) -> str:
        cid = by_entry[entry_id].commitment_id
        shown = ok(await asyncio.to_thread(memoryctl, "show", "--memory-ref", ref, cid, env=env))
        labels = _labels(shown)
        assert len(labels) == len(set(labels)), shown  # each label once
        for repr_mark in ("{", "}", "None", "'"):
            assert repr_mark not in shown, (repr_mark, shown)
        return shown

    shown = await show(once.id)
    assert _value(shown, "condition") == "time"
    at = by_entry[once.id].next_at
    assert at is not None
    berlin = at.astimezone(ZoneInfo("Europe/Berlin")).isoformat()
    assert _value(shown, "when") == f"{berlin} Europe/Berlin", shown
    assert _value(shown, "read") == "in 3 hours"
    assert _value(shown, "conventions") == "-"

    shown = await show(weekly.id)
    assert _value(shown, "condition") == "time"
    repeats = _value(shown, "repeats")
    assert repeats.startswith("FREQ=WEEKLY;BYDAY=MO at 09:00 Europe/Berlin"), shown
    assert _value(shown, "read") == "every Monday at 9:00"

    shown = await show(watch.id)
    assert _value(shown, "condition") == "predicate"
    assert _value(shown, "watches") == "memory.tag_exists with tag soc2-report-filed", shown
    assert _value(shown, "next") == "-"
    assert _value(shown, "occurrences") == "-"


async def test_infer_words_counts_in_the_singular_and_says_why_an_entry_was_not_read(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    database_url: str,
) -> None:
    env = _env(temporal_env, worker_task_queue, database_url)
    ref = unique_ref()
    await store.put(ref, note(INTENTION))
    why = {
        (await store.put(ref, note(text))).id: (reason, said)
        for text, reason, said in (
            (
                "Remind me about the thing with the vendor",
                "no-time-or-condition",
                "no time or condition the grammar reads",
            ),
            (
                "Remind me at 5pm sharp to leave",
                "leftover-words",
                "words left over after the time phrase",
            ),
            (
                "Remind me on Friday once the contract is signed",
                "time-and-condition",
                "a time and a condition in one entry",
            ),
            (
                "Remind me on 3/4/2020 to call the notary",
                "time-in-past",
                "the time is not after when it was written",
            ),
        )
    }
    printed = ok(await asyncio.to_thread(memoryctl, "infer", "--memory-ref", ref, env=env))
    assert "5 entries scanned: 1 commitment found (1 time, 0 predicate), 1 new," in printed
    assert "1 workflow started" in printed and "commitments" not in printed, printed
    assert "4 entries not understood:" in printed, printed
    lines = printed.splitlines()
    for entry_id, (reason, said) in why.items():
        (line,) = [line for line in lines if entry_id in line]
        assert line.strip() == f"{entry_id}: {said} ({reason})", line
    # Which words: never printed (the workflow result carries the reason's code only).
    for text in ("vendor", "sharp", "contract", "notary"):
        assert text not in printed

    # --json: what it was (unparsableIds), plus each entry's reason code.
    ref = unique_ref()
    again = await store.put(ref, note("Remind me at 6pm sharp to go home"))
    inferred = json.loads(
        ok(await asyncio.to_thread(memoryctl, "infer", "--memory-ref", ref, "--json", env=env))
    )["inference"]
    assert inferred["unparsableIds"] == [again.id] and inferred["unparsableCount"] == 1
    assert inferred["unparsableEntries"] == [{"memoryId": again.id, "reason": "leftover-words"}]


def test_every_reason_the_parser_gives_has_words_in_the_cli() -> None:
    from memory.commitment_parsing.inference import REASONS
    from memoryctl.commitments import UNPARSABLE_REASONS

    assert set(UNPARSABLE_REASONS) == set(REASONS)


def test_stored_text_shown_stays_on_its_line_and_escapes_control_characters() -> None:
    from memoryctl.commitments import _one_line

    assert _one_line("in 3\nhours") == "in 3 hours"
    assert _one_line("a\x1b[31mb\u202e") == "a\\x1b[31mb\\u202e"
    assert _one_line("à demain ✓") == "à demain ✓"
