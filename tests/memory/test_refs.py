import pytest

from schemas.errors import InvalidMemoryRef
from schemas.memory_ref import MAX_REF_BYTES, MemoryRef, parse_memory_ref, try_parse_memory_ref


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("mem://acme/agent-1", MemoryRef("acme", "agent-1")),
        ("mem://acme/agent-1/support.v2", MemoryRef("acme", "agent-1", "support.v2")),
        ("mem://t_1/a", MemoryRef("t_1", "a")),
    ],
)
def test_valid_refs_parse_and_round_trip(raw: str, expected: MemoryRef) -> None:
    parsed = parse_memory_ref(raw)
    assert parsed == expected
    assert str(parsed) == raw


MALFORMED = [
    "",
    "acme/agent-1",
    "http://acme/agent-1",
    "mem://acme",
    "mem://acme/",
    "mem:///agent-1",
    "mem://acme//agent-1",
    "mem://acme/agent-1/scope/extra",
    "mem://../agent-1",
    "mem://acme/..",
    "mem://acme/.",
    "mem://acme/agent-1/..",
    "mem://acme/agent\x00-1",
    "mem://acme/agent-1\n",
    "mem://acme/agent 1",
    "mem://acme/agent%2F..",
    "mem://acme/agent-1/" + "s" * 65,
    "mem://" + "a" * 300 + "/" + "b" * 300,
    "mem://acme/agént",
    "mem://.hidden/agent",
    "mem://acme/agent.",
]


@pytest.mark.parametrize("raw", MALFORMED)
def test_malformed_refs_are_rejected_without_echoing_input(raw: str) -> None:
    assert try_parse_memory_ref(raw) is None
    with pytest.raises(InvalidMemoryRef) as info:
        parse_memory_ref(raw)
    assert info.value.field == "memoryRef"
    if len(raw) > 8:
        assert raw not in str(info.value)


def test_oversize_ref_names_the_limit() -> None:
    raw = "mem://acme/" + "x" * MAX_REF_BYTES
    with pytest.raises(InvalidMemoryRef, match=f"at most {MAX_REF_BYTES} bytes"):
        parse_memory_ref(raw)


@pytest.mark.parametrize("raw", [None, 42, b"mem://acme/agent-1", ["mem://acme/a"]])
def test_non_string_refs_resolve_to_nothing(raw: object) -> None:
    assert try_parse_memory_ref(raw) is None
