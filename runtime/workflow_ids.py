"""The workflow ids of runs about a memoryRef, in one place for the worker, the API and
memoryctl.

Each id is a prefix plus the memoryRef, so one memoryRef has one distillation (one
consolidation, one inference) at a time: a second start finds the id running. Without
payload encryption the ref is written as is (``distill/mem://acme/agent-1``), readable in
the UI and in the README's `temporal` commands. With encryption, ids are recorded in
clear in every parent's history and in the UI, so the ref is replaced by a keyed hash
(HMAC-SHA256 under a secret derived from the system key, 128 bits, hex; the keyed hash
is memory/keyed_ids/opaque_refs.py's keyed_token): the same ref still gives the same id, so the
one-at-a-time guarantee holds, but the id reveals nothing. Workflows cannot read
configuration: DreamWorkflow asks the worker for its children's ids
(activities/workflow_id_activities.py).

The events' links to OpenIntent intents (memory/keyed_ids/intent_links.py) are keyed from the same
keys file, by a secret of their own (runtime/intent_link_keys.py).
"""

from __future__ import annotations

from memory.keyed_ids.opaque_refs import keyed_token
from runtime.payload_keys import cached_keyring
from runtime.settings import Settings
from schemas.memory_ref import MemoryRef, parse_memory_ref
from schemas.workflow_ids import ChildWorkflowIds


class WorkflowIds:
    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret

    @property
    def opaque(self) -> bool:
        return self._secret is not None

    def token(self, ref: MemoryRef | str) -> str:
        """What stands for ``ref`` in ids: the ref itself, or its keyed hash."""
        text = str(parse_memory_ref(ref))
        if self._secret is None:
            return text
        return keyed_token(self._secret, text)

    def distillation(self, ref: MemoryRef | str) -> str:
        return f"distill/{self.token(ref)}"

    def consolidation(self, ref: MemoryRef | str) -> str:
        return f"consolidate/{self.token(ref)}"

    def inference(self, ref: MemoryRef | str) -> str:
        return f"infer-commitments/{self.token(ref)}"

    def confirmation(self, ref: MemoryRef | str, commitment_id: str) -> str:
        """The inference run that arms a commitment just confirmed (no scan, arming
        only). Its own id, so a scheduled inference of the ref never refuses it."""
        return f"{self.inference(ref)}/confirm/{commitment_id}"

    def commitment_horizon(self, ref: MemoryRef | str) -> str:
        """The memoryRef's CommitmentHorizonWorkflow: one at a time, so every deferral
        signals the same run (workflows/commitment_horizon.py)."""
        return f"commitment-horizon/{self.token(ref)}"

    def fleet_commitment_horizon(self) -> str:
        """The fleet's CommitmentHorizonWorkflow, over every memoryRef: one run at a
        time, which every fleet dream batch signals. No memoryRef token is a bare word."""
        return "commitment-horizon/fleet"

    def dream(self, ref: MemoryRef | str) -> str:
        """A dream started by hand (memoryctl dream run): the schedule's id, which a
        scheduled run carries with its time appended (``dream:acme:agent-1-2026-...``),
        so every dream of a memoryRef has one id style in the UI and in queries."""
        return self.schedule(ref)

    def fleet_dream(self, tenant: str | None) -> str:
        """A fleet dream started by hand: ``fleet-dream/<tenant>`` or ``fleet-dream/all``
        (a tenant's keyed hash when ids are opaque), one at a time per scope."""
        if tenant is None:
            return "fleet-dream/all"
        if self._secret is None:
            return f"fleet-dream/{tenant}"
        return f"fleet-dream/{keyed_token(self._secret, tenant)}"

    def schedule(self, ref: MemoryRef | str) -> str:
        """``dream:<tenant>:<agent>[:<scope>]``: ':' cannot occur in a segment, so
        distinct refs get distinct ids (see memoryctl/dream_schedules.py); opaque:
        ``dream:<hash>``. A scheduled dream's id is this plus a timestamp."""
        parsed = parse_memory_ref(ref)
        if self._secret is not None:
            return f"dream:{self.token(parsed)}"
        return ":".join(["dream", parsed.tenant, parsed.agent, *filter(None, [parsed.scope])])

    def _tenant_token(self, tenant: str, name: str) -> str:
        text = f"{tenant}/{name}"
        return text if self._secret is None else keyed_token(self._secret, text)

    def proposal(self, tenant: str, proposal_id: str) -> str:
        """A proposal's lifecycle workflow: one per proposal (ids are unique per tenant)."""
        return f"proposal/{self._tenant_token(tenant, proposal_id)}"

    def automation(self, tenant: str, proposal_id: str) -> str:
        """The schedule an applied automation proposal installs: one per proposal, so
        an apply retried after its install finds it instead of installing twice."""
        return f"automation/{self._tenant_token(tenant, proposal_id)}"

    def children(self, ref: MemoryRef | str) -> ChildWorkflowIds:
        return ChildWorkflowIds(
            distillation=self.distillation(ref),
            consolidation=self.consolidation(ref),
            inference=self.inference(ref),
        )


PLAIN = WorkflowIds()


def workflow_ids_for(settings: Settings) -> WorkflowIds:
    """Opaque ids exactly when payloads are encrypted (the same keys file)."""
    if not settings.payload_keys_file:
        return PLAIN
    return WorkflowIds(cached_keyring(settings.payload_keys_file).workflow_id_secret)
