"""memoryctl memory search as a user runs it (a subprocess against DATABASE_URL): hits
ranked by meaning in a table or as JSON, and bad input as one line with a non-zero
exit."""

from __future__ import annotations

import json

from memory.store import PostgresMemoryStore
from tests.memoryctl.test_memoryctl_forget import memoryctl, ok, one_line_error
from tests.support.factories import note, unique_ref


async def test_search_from_the_cli(store: PostgresMemoryStore, database_url: str) -> None:
    ref = unique_ref()
    likes = await store.put(ref, note("Dana likes green tea in the afternoon"))
    await store.put(ref, note("The build server restarts every Sunday"))
    table = ok(
        memoryctl(
            "memory",
            "search",
            "--memory-ref",
            ref,
            "which drink does Dana prefer",
            "--limit",
            "1",
            database_url=database_url,
        )
    )
    assert likes.id in table and "green tea" in table and "1 hit (hybrid search" in table
    as_json = json.loads(
        ok(
            memoryctl(
                "memory",
                "search",
                "--memory-ref",
                ref,
                "Sunday",
                "--mode",
                "text",
                "--json",
                database_url=database_url,
            )
        )
    )
    assert as_json["mode"] == "text" and len(as_json["hits"]) == 1
    assert "restarts" in as_json["hits"][0]["entry"]["content"]
    error = one_line_error(
        memoryctl("memory", "search", "--memory-ref", ref, "x" * 2001, database_url=database_url),
        2,
    )
    assert "query" in error and "2000" in error
    bad_mode = memoryctl(
        "memory", "search", "--memory-ref", ref, "x", "--mode", "fuzzy", database_url=database_url
    )
    assert bad_mode.returncode == 2 and "--mode" in bad_mode.stderr


async def test_identical_hits_fold_into_one_row_and_scores_are_explained(
    store: PostgresMemoryStore, database_url: str
) -> None:
    # Issue 41: three copies of one note filled the top of the table, and score, text and
    # vector columns came with no word of what they are.
    ref = unique_ref()
    copies = [
        await store.put(ref, note("Renewal quote for Vandelay goes out Friday")) for _ in "abc"
    ]
    other = await store.put(ref, note("Renewal quote for Initech goes out Monday"))

    def search(*more: str) -> str:
        return ok(
            memoryctl(
                "memory", "search", "--memory-ref", ref, "renewal quote", *more,
                database_url=database_url,
            )
        )  # fmt: skip

    table = search()
    assert table.count("Vandelay") == 1 and other.id in table
    assert all(copy.id in table for copy in copies)  # the folded ones named by id
    assert "4 hits, 2 identical to a hit above and folded into it (hybrid search" in table
    assert "score" not in table  # no unexplained columns by default
    explained = search("--explain")
    assert "score: how relevant the fused ranking found the hit" in explained
    assert "full-text" in explained and "vector" in explained
    as_json = json.loads(search("--json"))
    assert len(as_json["hits"]) == 4  # --json folds nothing


async def test_search_by_who_said_it_and_when_from_the_cli(
    store: PostgresMemoryStore, database_url: str
) -> None:
    ref = unique_ref()
    await store.put(ref, note("We adopted a puppy", metadata={"saidBy": "Melanie"}))
    caroline = await store.put(
        ref,
        note(
            "I adopted a puppy", metadata={"saidBy": "Caroline", "saidAt": "2023-05-08T13:56:00Z"}
        ),
    )

    def found(*filters: str) -> list[str]:
        shown = ok(
            memoryctl(
                "memory",
                "search",
                "--memory-ref",
                ref,
                "puppy",
                *filters,
                "--json",
                database_url=database_url,
            )
        )
        return [hit["entry"]["id"] for hit in json.loads(shown)["hits"]]

    assert found("--said-by", "Caroline") == [caroline.id]
    assert found("--said-before", "2024-01-01T00:00:00Z") == [caroline.id]
    error = one_line_error(
        memoryctl(
            "memory",
            "search",
            "--memory-ref",
            ref,
            "puppy",
            "--said-after",
            "May 2023",
            database_url=database_url,
        ),
        2,
    )
    assert "said_after" in error


async def test_a_changed_fact_from_the_cli(store: PostgresMemoryStore, database_url: str) -> None:
    """memory put --supersedes states an update; search shows the newer value first and
    the older marked; --exclude-superseded leaves the older out; a forged id is exit 2."""
    ref = unique_ref()
    old = await store.put(ref, note("The gym opens at 6am"))
    written = ok(
        memoryctl(
            "memory",
            "put",
            "--memory-ref",
            ref,
            "--content",
            "The gym opens at 7am on weekdays",
            "--supersedes",
            old.id,
            "--json",
            database_url=database_url,
        )
    )
    new_id = json.loads(written)["id"]
    table = ok(
        memoryctl(
            "memory", "search", "--memory-ref", ref, "when does the gym open",
            database_url=database_url,
        )
    )  # fmt: skip
    assert table.index(new_id) < table.index(old.id)
    assert f"superseded by {new_id}" in table
    current = ok(
        memoryctl(
            "memory", "search", "--memory-ref", ref, "when does the gym open",
            "--exclude-superseded", database_url=database_url,
        )
    )  # fmt: skip
    assert new_id in current and old.id not in current
    refused = one_line_error(
        memoryctl(
            "memory", "put", "--memory-ref", ref, "--content", "x", "--supersedes", "m-forged",
            database_url=database_url,
        ),
        2,
    )  # fmt: skip
    assert "--supersedes" in refused
