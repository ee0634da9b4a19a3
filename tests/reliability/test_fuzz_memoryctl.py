"""Hostile input through memoryctl (issue 12, the CLI surface): Hypothesis draws 2,000
command lines (tests/support/fuzzing.py) over every command that works without a running
worker -- memory put / get / list / forget, forget, lineage, events, events tail, index
show, consolidate audit / conflicts / undo, commitments list / show / cancel / timezone,
keys create / list / revoke, and the Temporal commands (schedule create / trigger / delete,
dream run, consolidate run, commitments infer) against a Temporal address nobody listens on
-- with hostile memoryRefs (look-alikes, traversal, NUL, surrogates, oversize), ids, tags,
names, keys, content (huge, control characters, homoglyphs, JSON, non-UTF-8 stdin), token
budgets, limits, sequence numbers, time zones and cron strings, some aimed at a real entry
of a real memoryRef.

Each command either succeeds or exits 1 or 2 with exactly one line on stderr, starting
"error: ", that names the option (exit 2); never a traceback, never what was passed
(the hostile marker); and a refused command changes nothing stored (the table
fingerprint). Commands run in-process as the console script runs them
(tests/support/memoryctl_inprocess.py), each in a thread beside the test's event loop.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given
from hypothesis import strategies as st

from memory.store import PostgresMemoryStore
from schemas.memory_entry import NewMemoryEntry
from tests.support.fuzzing import fuzz_settings
from tests.support.hostile_input import MARKER, hostile_refs, hostile_text, huge_text, token_budgets
from tests.support.memoryctl_inprocess import Ran, memoryctl
from tests.support.scan import fingerprint

pytestmark = pytest.mark.slow

TENANT = "fzcli"
REF = f"mem://{TENANT}/agent-1"
SEEDED_ID = "fz-seeded-entry"

refs = st.just(REF) | st.just(REF) | hostile_refs(TENANT).map(str)
text = hostile_text | st.sampled_from(["", "-", "--yes", "-x", "a b", "[red]x[/red]", "%s"])
ids = (
    st.sampled_from([SEEDED_ID, SEEDED_ID.upper(), "cmt-abc123", "cp-1", "m0", "..", "x" * 200])
    | text
)
names = st.sampled_from(["ns", "a_b", "a/b", "private", "k1", "\u2160"]) | text
tags = st.sampled_from(["t", "commitment", "a-only", "T", "t\u200b"]) | text
numbers = (
    token_budgets.map(lambda v: v if isinstance(v, str) else repr(v))
    | st.sampled_from(["0", "-1", "1", "1.5", "10000", "10001", "9223372036854775808", "1e3"])
    | st.integers().map(str)
)
zones = st.sampled_from(["UTC", "Europe/Berlin", "Mars/Olympus", "", "../etc/localtime"]) | text
crons = st.sampled_from(["0 23 * * *", "* * * * * * * *", "@every 1s", "61 * * * *", ""]) | text
content = (
    text
    | huge_text
    | st.sampled_from(['{"a": 1}', "[1, 2", "null", "pay\u0430l", "\x1b[31mred", "a\r\nb"])
)


def _opt(flag: str, values: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(values, max_size=2).map(lambda vs: [part for v in vs for part in (flag, v)])


def _maybe(flag: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[str]]:
    return st.one_of(st.just([]), values.map(lambda v: [flag, str(v)]))


json_flag = st.sampled_from([[], ["--json"]])


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[list[str], bytes | None]:
    """(argv after `memoryctl`, stdin bytes)."""
    ref = ["--memory-ref", draw(refs)]
    kind = draw(
        st.sampled_from(
            [
                *("put", "get", "list", "forget", "lineage", "events", "tail", "index"),
                *("audit", "conflicts", "undo", "c-list", "c-show", "c-cancel", "timezone"),
                *("k-create", "k-list", "k-revoke", "s-create", "s-trigger", "s-delete"),
                *("dream", "c-run", "infer", "garbage"),
            ]
        )
    )
    stdin: bytes | None = None
    if kind == "put":
        body = draw(content | st.just("-"))
        if body == "-":
            stdin = draw(
                st.binary(max_size=64) | content.map(lambda c: c.encode("utf-8", "replace"))
            )
        args = ["memory", "put", *ref, "--content", body, *draw(_opt("--tag", tags))]
        args += draw(_maybe("--tier", st.sampled_from(["working", "semantic", "x", ""]) | text))
        args += draw(_maybe("--namespace", names)) + draw(_maybe("--key", names))
        return args + draw(json_flag), stdin
    if kind == "get":
        return ["memory", "get", *ref, draw(ids), *draw(json_flag)], None
    if kind == "list":
        args = ["memory", "list", *ref, *draw(_maybe("--tag", tags))]
        return args + draw(_maybe("--limit", numbers)) + draw(json_flag), None
    if kind == "forget":
        prefix = draw(st.sampled_from([["forget"], ["memory", "forget"]]))
        selectors = draw(_opt("--id", ids)) + draw(_maybe("--tag", tags))
        selectors += draw(_maybe("--subject", names))
        flags = draw(
            st.lists(st.sampled_from(["--tenant-wide", "--dry-run", "--json"]), unique=True)
        )
        # --yes erases for real: only with a selector aimed at nothing that exists.
        if draw(st.booleans()) and "--dry-run" not in flags:
            flags.append("--yes")
        return [*prefix, *ref, *selectors, *flags], None
    if kind == "lineage":
        return ["lineage", *ref, "--id", draw(ids), *draw(json_flag)], None
    if kind == "events":
        args = ["events", *ref, *draw(_maybe("--after-seq", numbers))]
        return args + draw(_maybe("--limit", numbers)), None
    if kind == "tail":
        types = draw(_opt("--type", st.sampled_from(["memory.written", "memory.x"]) | text))
        return ["events", "tail", *ref, *types, *draw(_maybe("--after", numbers))], None
    if kind == "index":
        return ["index", "show", *ref], None
    if kind in ("audit", "conflicts"):
        args = ["consolidate", kind, *ref]
        if kind == "audit":
            args += draw(_maybe("--pass", ids))
        return args + draw(json_flag), None
    if kind == "undo":
        return ["consolidate", "undo", *ref, "--pass", draw(ids), *draw(json_flag)], None
    if kind == "c-list":
        state = draw(_maybe("--state", st.sampled_from(["armed", "ARMED", "x"]) | text))
        return ["commitments", "list", *ref, *state, *draw(json_flag)], None
    if kind in ("c-show", "c-cancel"):
        verb = kind.removeprefix("c-")
        return ["commitments", verb, *ref, draw(ids), *draw(json_flag)], None
    if kind == "timezone":
        tenant = draw(st.sampled_from([TENANT, TENANT.upper(), f"{TENANT}.", "", ".."]) | text)
        zone = draw(st.one_of(st.just([]), zones.map(lambda z: [z])))
        return ["commitments", "timezone", "--tenant", tenant, *zone], None
    if kind == "k-create":
        tenant = draw(st.sampled_from([TENANT, "..", "", "a" * 65]) | text)
        return ["keys", "create", "--tenant", tenant, *draw(_maybe("--name", names))], None
    if kind == "k-list":
        return ["keys", "list", *draw(_maybe("--tenant", names)), *draw(json_flag)], None
    if kind == "k-revoke":
        return ["keys", "revoke", draw(ids)], None
    if kind == "s-create":
        args = ["schedule", "create", *ref, *draw(_maybe("--token-budget", numbers))]
        args += draw(_maybe("--cron", crons)) + draw(_maybe("--schedule-id", ids))
        return args, None
    if kind in ("s-trigger", "s-delete"):
        return ["schedule", kind.removeprefix("s-"), draw(ids)], None
    if kind == "dream":
        return ["dream", "run", *ref, *draw(_maybe("--token-budget", numbers))], None
    if kind == "c-run":
        return ["consolidate", "run", *ref], None
    if kind == "infer":
        return ["commitments", "infer", *ref], None
    # Options and arguments no command has, or in the wrong place.
    return draw(
        st.lists(text | st.sampled_from(["memory", "--memory-ref", "--json"]), max_size=4)
    ), None


@pytest.fixture(scope="module")
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


BASELINE: dict[object, str] = {}


@pytest.fixture
async def cli_env(store: PostgresMemoryStore, engine, database_url: str, closed_port: int):
    await store.put(
        REF,
        NewMemoryEntry(
            id=SEEDED_ID, content="a seeded entry", tags=("t",), namespace="ns", key="k1"
        ),
    )
    BASELINE[engine] = await fingerprint(engine)
    return {
        "DATABASE_URL": database_url,
        "TEMPORAL_ADDRESS": f"127.0.0.1:{closed_port}",
        "COLUMNS": "200",
    }


def check_one_line_failure(args: list[str], ran: Ran) -> str:
    assert ran.crash is None, (args, repr(ran.crash))
    assert "Traceback" not in ran.stdout + ran.stderr, (args, ran.stderr)
    # Nothing typed is echoed, click's own usage errors included (memoryctl.main words
    # them without the values): a value missing its option name may be entry content.
    assert MARKER not in ran.stdout + ran.stderr, (args, ran.stderr)
    if ran.status == 2 and not ran.stderr and "Usage:" in ran.stdout:
        return "help"  # a group without a command shows its help, as designed
    lines = ran.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, ran.stderr)
    if ran.status == 2:  # bad input: the line names the option or argument
        named = ["--", "memoryRef", "ID", "KEY_ID", "tenant", "zone", "cron", "name"]
        named += ["Missing", "No such", "Got unexpected"]  # click: the token is the subject
        assert any(word in lines[0] for word in named), (args, lines[0])
    return lines[0]


@fuzz_settings(suppress=[HealthCheck.data_too_large])  # 200 kB texts on purpose
@given(line=command_lines())
async def test_hostile_command_lines_succeed_or_fail_in_one_line(cli_env, engine, line) -> None:
    args, stdin = line
    ran = await asyncio.to_thread(memoryctl, args, cli_env, stdin)
    label = " ".join(a for a in args[:2] if not a.startswith("-") and a.isascii())[:24]
    if ran.status == 0:
        assert ran.crash is None and "Traceback" not in ran.stdout + ran.stderr, args
        event(f"{label}: ok")
        BASELINE[engine] = await fingerprint(engine)  # an accepted write moves it
        return
    check_one_line_failure(args, ran)
    event(f"{label}: exit {ran.status}")
    assert ran.status in (1, 2), (args, ran.status, ran.stderr)
    assert await fingerprint(engine) == BASELINE[engine], (args, ran.stderr)
