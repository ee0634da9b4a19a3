"""The resolved-key cache shares one look-up among the requests that find a key
uncached (api/auth.py): under load a key's expiry no longer sends every request in
flight to the database, and what a look-up answers is still served for CACHE_S at most.
The look-up here is a plain function standing in for ApiKeyStore.authenticate, whose own
behaviour tests/api/test_api_edges.py checks against the database."""

from __future__ import annotations

import asyncio

import pytest

from api.auth import _KeyCache
from memory.tenants.api_keys import KeyIdentity

TENANT_A = KeyIdentity("tenant-a", "k", frozenset({"proposals:apply"}))


class Lookups:
    def __init__(self, answer: KeyIdentity | None = TENANT_A) -> None:
        self.answer = answer
        self.calls = 0
        self.release = asyncio.Event()
        self.fail: Exception | None = None

    async def __call__(self, key: str) -> KeyIdentity | None:
        self.calls += 1
        await self.release.wait()
        if self.fail is not None:
            raise self.fail
        return self.answer


async def test_requests_that_find_a_key_uncached_share_one_look_up() -> None:
    cache, lookups = _KeyCache(), Lookups()
    waiting = [asyncio.create_task(cache.identity_of("amk_k_s", lookups)) for _ in range(50)]
    await asyncio.sleep(0)
    lookups.release.set()
    assert await asyncio.gather(*waiting) == [TENANT_A] * 50
    assert lookups.calls == 1
    assert await cache.identity_of("amk_k_s", lookups) == TENANT_A  # cached now
    assert cache.get("amk_k_s") == "tenant-a"  # the tenant alone (api/fast_reads.py)
    assert lookups.calls == 1


async def test_an_unknown_or_revoked_key_is_not_cached() -> None:
    cache, lookups = _KeyCache(), Lookups(answer=None)
    lookups.release.set()
    assert await cache.identity_of("amk_k_s", lookups) is None
    assert await cache.identity_of("amk_k_s", lookups) is None
    assert lookups.calls == 2


async def test_a_failed_look_up_fails_its_waiters_and_is_not_kept() -> None:
    cache, lookups = _KeyCache(), Lookups()
    lookups.fail = ConnectionError("database away")
    waiting = [asyncio.create_task(cache.identity_of("amk_k_s", lookups)) for _ in range(3)]
    await asyncio.sleep(0)
    lookups.release.set()
    for outcome in await asyncio.gather(*waiting, return_exceptions=True):
        assert isinstance(outcome, ConnectionError)
    lookups.fail = None
    assert await cache.identity_of("amk_k_s", lookups) == TENANT_A
    assert lookups.calls == 2


async def test_a_caller_that_goes_away_does_not_cancel_the_look_up_for_the_others() -> None:
    cache, lookups = _KeyCache(), Lookups()
    leaving = asyncio.create_task(cache.identity_of("amk_k_s", lookups))
    staying = asyncio.create_task(cache.identity_of("amk_k_s", lookups))
    await asyncio.sleep(0)
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    lookups.release.set()
    assert await staying == TENANT_A
    assert lookups.calls == 1
