"""The proposals seam (openwop scenario proposal-reviewable-learning, RFC 0096) driven as
the suite drives it (../shared/spec/openwop-host-sample-seams.md §3.5 and §7): a drafts
list for the caller's tenant with every object a valid Proposal, an apply with the
suite's own key refused with 403 (it holds no activation scope), nothing applied after
the refusal, and the capability block that gates it. No skip: a host without the seam
fails here."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.conformance.conftest import Target, Wire

KINDS = {"agent-pack", "workflow-chain-pack", "prompt-template", "automation"}
STATES = {"draft", "revised", "applied", "rejected", "archived"}


def assert_valid_proposal(proposal: dict[str, Any]) -> None:
    """Section 7's rules, checked independently of the host's own models."""
    assert isinstance(proposal["id"], str) and proposal["id"]
    assert proposal["kind"] in KINDS and proposal["kind"] != "rule"
    assert proposal["state"] in STATES
    assert isinstance(proposal["artifact"], dict)
    provenance = proposal["provenance"]
    assert isinstance(provenance["sourceRunIds"], list)
    assert all(isinstance(run_id, str) for run_id in provenance["sourceRunIds"])
    owner = proposal["owner"]
    assert isinstance(owner["tenant"], str) and owner["tenant"]
    assert set(owner) <= {"tenant", "workspace", "principal"}
    assert proposal.get("duplicateOf") is None or isinstance(proposal["duplicateOf"], str)
    assert proposal.get("activation") is None or isinstance(proposal["activation"], dict)
    datetime.fromisoformat(proposal["createdAt"].replace("Z", "+00:00"))
    for optional in ("title", "rationale"):
        assert proposal.get(optional) is None or isinstance(proposal[optional], str)


async def test_the_proposals_seam_lists_drafts_and_refuses_an_unscoped_apply(
    target: Target, wire: Wire
) -> None:
    async with target.client(wire=wire) as public:
        discovery = (await public.get("/.well-known/openwop")).json()
    if wire.major == 1:
        block = discovery["agents"]["proposals"]
        assert block["activation"] in ("approval-gate", "direct-rbac")
        assert set(block["artifactKinds"]) <= KINDS and block["artifactKinds"]

    async with target.client(target.key_a, wire) as http:
        listed = await http.get(f"{wire.seams}/proposals", params={"state": "draft"})
        assert listed.status_code == 200, listed.text
        drafts = listed.json()["proposals"]
        assert drafts, "an empty drafts list leaves the scenario nothing to act on"
        for proposal in drafts:
            assert_valid_proposal(proposal)
            assert proposal["state"] == "draft"
        first = drafts[0]["id"]

        refused = await http.post(f"{wire.seams}/proposals/{first}/apply", json={})
        assert refused.status_code == 403, refused.text
        body = refused.json()
        assert body["error"].endswith("forbidden_scope")
        assert body["details"]["requiredScope"] == "proposals:apply"

        again = await http.get(f"{wire.seams}/proposals/{first}")
        assert again.status_code == 200, again.text
        assert again.json()["state"] != "applied"
        assert again.json()["activation"] is None


async def test_a_proposal_is_read_only_in_its_own_tenant(target: Target, wire: Wire) -> None:
    async with target.client(target.key_a, wire) as a, target.client(target.key_b, wire) as b:
        mine = (await a.get(f"{wire.seams}/proposals")).json()["proposals"]
        theirs = (await b.get(f"{wire.seams}/proposals")).json()["proposals"]
        # However many proposals a deployment with real data holds (the quick start's
        # dream proposes one of its own beside the seam's), each key lists its own
        # tenant's only.
        assert mine, "the seam lists at least its demo draft"
        (tenant_a,) = {p["owner"]["tenant"] for p in mine}
        assert tenant_a not in {p["owner"]["tenant"] for p in theirs}
        # The demo draft has one fixed id in every tenant: read by that id with the other
        # tenant's key, each gets its own or nothing, never the other tenant's.
        for proposal in mine:
            read = await b.get(f"{wire.seams}/proposals/{proposal['id']}")
            assert read.status_code in (200, 404), read.text
            if read.status_code == 200:
                assert read.json()["owner"]["tenant"] != tenant_a
        # Another tenant's synthesized id is simply not found.
        if not target.external:
            unknown = await b.get(f"{wire.seams}/proposals/prop-does-not-exist")
            assert unknown.status_code == 404 and unknown.json()["error"].endswith("not_found")
