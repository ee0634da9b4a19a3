"""cl100k_base counting works offline from the bundled, sha256-verified rank file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory.tokens import (
    CL100K_SHA256,
    count_tokens,
    count_tokens_batch,
    load_encoding,
    rank_file,
    verify_rank_file,
)


def test_known_counts() -> None:
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
    # Special-token text is counted as plain text, never as a control token.
    assert count_tokens("<|endoftext|>") > 1


def test_batch_matches_serial() -> None:
    texts = ["a", "tokens are fun", "ünïcødé 😀", "x" * 1000]
    assert count_tokens_batch(texts) == [count_tokens(t) for t in texts]


def test_rank_file_is_the_official_one() -> None:
    assert verify_rank_file() == CL100K_SHA256


def test_corrupted_rank_file_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "cl100k_base.tiktoken"
    shutil.copy(rank_file(), copy)
    with copy.open("ab") as handle:
        handle.write(b"ZZZZ 1\n")
    with pytest.raises(ValueError, match="sha256"):
        load_encoding(copy)


def test_counting_works_with_no_network_and_an_empty_cache(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import socket
        def refuse(*args, **kwargs):
            raise OSError("network disabled in this test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from memory.tokens import count_tokens
        print(count_tokens("offline counting works"))
        """
    )
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
        "DATA_GYM_CACHE_DIR": str(tmp_path / "gym"),
    }
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) == count_tokens("offline counting works")
    # Nothing was fetched or cached: the rank file is read in place.
    assert not (tmp_path / "tiktoken").exists()
