"""memoryctl proposals: review what a dream learned (RFC 0096 reviewable learning).

    memoryctl proposals list --tenant T [--state draft|revised|applied|rejected|archived]
                             [--kind automation|...] [--memory-ref REF] [--json]
    memoryctl proposals show --tenant T ID [--json]     artifact, rationale, provenance
    memoryctl proposals revise --tenant T ID [--title S] [--rationale S]
                               [--artifact-file PATH|-] [--json]
    memoryctl proposals apply --tenant T ID [--override] [--artifact-digest sha256:...] [--json]
    memoryctl proposals decide --tenant T ID granted|denied [--json]   approval-gate
    memoryctl proposals reject --tenant T ID [--reason S] [--json]
    memoryctl proposals archive --tenant T ID [--json]

The proposals group: its typer app and every command in it. list and show read the
store; revise, apply, decide, reject and archive take the path the HTTP API takes
(api/proposal_review.py: the store's checks, then an update of the proposal's
ProposalWorkflow), as the operator: actor ``memoryctl``, holding every scope. A
proposal is inert until applied; apply installs exactly the stored artifact as a
Temporal schedule, or under the approval-gate activation waits for ``decide``. Every
command is scoped to --tenant: another tenant's id is not found (exit 1). A move the
lifecycle forbids (archiving an applied proposal) is one line and exit 1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer
from rich import box
from rich.table import Table

from memoryctl.cli import (
    JsonOption,
    bad_input,
    checked_ref,
    console,
    open_store,
    print_json,
    run_action,
    short_instant,
    temporal_client,
    with_store,
)
from memoryctl.empty_lists import list_or_why
from schemas.proposals import MAX_REASON_CHARS, ProposalKind, ProposalState

if TYPE_CHECKING:
    from api.proposal_review import ProposalReview, Reviewer
    from schemas.proposals import Proposal, ProposalRevision, ProposalStatus

T = TypeVar("T")
ACTOR = "memoryctl"  # recorded as the activation's activatedBy
STDIN = "-"

proposals_app = typer.Typer(
    no_args_is_help=True,
    help="Proposals a dream learned (RFC 0096): list, show, revise, apply, reject, archive.",
)
TenantOption = Annotated[
    str, typer.Option("--tenant", help="The tenant (a memoryRef's first segment).")
]
IdArgument = Annotated[str, typer.Argument(metavar="ID", help="A proposal id (list shows it).")]
StateOption = Annotated[
    ProposalState | None, typer.Option("--state", help="Only proposals in this state.")
]
KindOption = Annotated[
    ProposalKind | None, typer.Option("--kind", help="Only proposals of this artifact kind.")
]


def _checked_tenant(tenant: str) -> str:
    """--tenant by the memoryRef segment grammar, or one line naming it and exit 2."""
    from schemas.errors import InvalidInput
    from schemas.memory_ref import parse_segment

    try:
        return parse_segment(tenant, "--tenant")
    except InvalidInput as error:
        raise bad_input(str(error)) from None


def _checked_id(proposal_id: str) -> str:
    """ID by the proposal id grammar, or one line and exit 2: a refusal quotes only an
    id of that grammar, never arbitrary text."""
    from pydantic import TypeAdapter, ValidationError

    from schemas.proposals import ProposalId

    try:
        return TypeAdapter(ProposalId).validate_python(proposal_id)
    except ValidationError:
        raise bad_input(
            "ID: must be a proposal id: 1-64 letters, digits, '_', '.' and '-', "
            "starting with a letter or digit"
        ) from None


def _review(
    tenant: str, proposal_id: str, act: Callable[[ProposalReview, Reviewer], Awaitable[T]]
) -> T:
    """One review action as the operator. The proposal is looked up first, so an
    unknown id (or another tenant's) is not found without Temporal being asked."""

    async def action() -> T:
        from api.proposal_review import ProposalReview, Reviewer
        from runtime.settings import Settings

        async with open_store() as store:
            await store.proposals.get(tenant, proposal_id)  # ProposalNotFound: exit 1
            review = ProposalReview(store.proposals, await temporal_client(), Settings())
            return await act(review, Reviewer(tenant=tenant, actor=ACTOR, scopes=None))

    return run_action(action)


# ---------------------------------------------------------------------- reads


def _table(rows: list[Proposal]) -> Table:
    """Two lines a proposal, readable at 80 columns: id and memoryRef, state and kind,
    created and title (wrapped) stacked. Six columns side by side left the memoryRef
    and the title a letter wide; this way the id stays whole to copy into show."""
    table = Table(box=box.SIMPLE_HEAD, show_lines=True)
    table.add_column("id\nmemoryRef", overflow="fold", min_width=max(len(p.id) for p in rows))
    table.add_column("state\nkind", overflow="fold")
    table.add_column("created\ntitle")
    for proposal in rows:
        table.add_row(
            f"{proposal.id}\n{proposal.memory_ref}",
            f"{proposal.state}\n{proposal.kind}",
            f"{short_instant(proposal.created_at)}\n{proposal.title or '-'}",
        )
    return table


@proposals_app.command("list")
def list_(
    tenant: TenantOption,
    state: StateOption = None,
    kind: KindOption = None,
    memory_ref: Annotated[
        str | None, typer.Option("--memory-ref", help="Only proposals learned from this ref.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """The tenant's proposals, oldest first."""
    tenant = _checked_tenant(tenant)
    ref = checked_ref(memory_ref) if memory_ref is not None else None
    if ref is not None and ref.tenant != tenant:
        raise bad_input(f"--memory-ref: must be a memoryRef of tenant {tenant}")
    rows = list_or_why(
        lambda store: store.proposals.list(tenant, state=state, kind=kind, memory_ref=ref),
        tenant,
        ref.agent if ref is not None else None,
    )
    if as_json:
        print_json([proposal.to_wire() for proposal in rows])
    elif rows:
        console.print(_table(rows))
    else:
        console.print("no proposals")


def _activation(proposal: Proposal) -> str:
    activation = proposal.activation
    if activation is None:
        return "-"
    approval = f", approval {activation.approval_id}" if activation.approval_id else ""
    overridden = ", gate overridden" if activation.overridden else ""
    return (
        f"{activation.mode} by {activation.activated_by} at "
        f"{short_instant(activation.activated_at)}{approval}{overridden}; "
        f"installed {activation.installed_artifact_ref}"
    )


def _fields(proposal: Proposal) -> list[tuple[str, str]]:
    provenance = proposal.provenance
    model = f" (model {provenance.synthesizer_model})" if provenance.synthesizer_model else ""
    fields = [
        ("id", proposal.id),
        ("state", proposal.state),
        ("kind", proposal.kind),
        ("memoryRef", proposal.memory_ref),
        ("title", proposal.title or "-"),
        ("rationale", proposal.rationale or "-"),
        ("provenance", f"runs {', '.join(provenance.source_run_ids) or '-'}{model}"),
        ("duplicateOf", proposal.duplicate_of or "-"),
        ("activation", _activation(proposal)),
        ("artifactDigest", proposal.artifact_digest),
        ("version", str(proposal.version)),
        ("created", short_instant(proposal.created_at)),
        ("updated", short_instant(proposal.updated_at)),
    ]
    if proposal.rejection_reason:
        fields.append(("reason", proposal.rejection_reason))
    return fields


@proposals_app.command("show")
def show(tenant: TenantOption, proposal_id: IdArgument, as_json: JsonOption = False) -> None:
    """One proposal: artifact, rationale, provenance, activation.

    The artifact is inert until applied. Exit 1 when the tenant has no proposal with
    this id."""
    tenant = _checked_tenant(tenant)
    proposal_id = _checked_id(proposal_id)
    proposal = with_store(lambda store: store.proposals.get(tenant, proposal_id))
    if as_json:
        print_json(proposal.to_wire())
        return
    for name, value in _fields(proposal):
        console.print(f"{name + ':':<16}{value}", markup=False, soft_wrap=True)
    console.print("artifact:", markup=False)
    # Plain stdout, never wrapped: the JSON can be copied into --artifact-file.
    typer.echo(json.dumps(proposal.artifact, indent=2))


# ---------------------------------------------------------------------- moves


def _artifact(source: str) -> dict[str, Any]:
    """--artifact-file's JSON object (a path, or '-' for stdin), or one line and exit 2."""
    try:
        raw = sys.stdin.buffer.read() if source == STDIN else Path(source).read_bytes()
    except OSError as error:
        raise bad_input(f"--artifact-file: cannot read it ({error.strerror})") from None
    try:
        artifact = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise bad_input("--artifact-file: not a JSON document") from None
    if not isinstance(artifact, dict):
        raise bad_input("--artifact-file: must hold a JSON object (the artifact)")
    return artifact


def _revision(
    title: str | None, rationale: str | None, artifact: dict[str, Any] | None
) -> ProposalRevision:
    """The revision the options describe, or one line naming the option and exit 2."""
    from pydantic import ValidationError

    from schemas.proposals import ProposalRevision

    try:
        return ProposalRevision(title=title, rationale=rationale, artifact=artifact)
    except ValidationError as error:
        problem = error.errors()[0]
        field = str(problem["loc"][0]) if problem["loc"] else "input"
        raise bad_input(f"--{field}: {problem['msg']}") from None


def _moved(proposal: Proposal, as_json: bool, extra: str = "") -> None:
    if as_json:
        print_json(proposal.to_wire())
    else:
        console.print(f"{proposal.id}: {proposal.state}{extra}", markup=False, soft_wrap=True)


@proposals_app.command("revise")
def revise(
    tenant: TenantOption,
    proposal_id: IdArgument,
    title: Annotated[str | None, typer.Option("--title", help="A new title.")] = None,
    rationale: Annotated[str | None, typer.Option("--rationale", help="A new rationale.")] = None,
    artifact_file: Annotated[
        str | None,
        typer.Option("--artifact-file", help="A new artifact: a JSON file, '-' for stdin."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Change an open proposal's title, rationale or artifact; nothing is applied.

    The artifact is checked for the proposal's kind; the proposal becomes revised."""
    tenant = _checked_tenant(tenant)
    proposal_id = _checked_id(proposal_id)
    if title is None and rationale is None and artifact_file is None:
        raise bad_input("give --title, --rationale or --artifact-file (what to revise)")
    artifact = _artifact(artifact_file) if artifact_file is not None else None
    revision = _revision(title, rationale, artifact)

    async def act(review: ProposalReview, who: Reviewer) -> Proposal:
        return await review.revise(who, proposal_id, revision)

    proposal = _review(tenant, proposal_id, act)
    _moved(proposal, as_json, f", version {proposal.version}, {proposal.artifact_digest}")


def _gated(proposal: Proposal, status: ProposalStatus | None, as_json: bool) -> None:
    """What apply and decide print: applied with its schedule, or the gate's state."""
    if as_json:
        wire = proposal.to_wire()
        if proposal.state != "applied":  # as the HTTP API's 202: the gate's view
            wire["approval"] = status.to_wire() if status is not None else None
        print_json(wire)
    elif proposal.activation is not None:
        _moved(proposal, False, f", schedule {proposal.activation.installed_artifact_ref}")
    elif status is not None and status.gate == "pending":
        console.print(
            f"{proposal.id}: awaiting approval ({status.approval_id}); decide with "
            f"memoryctl proposals decide --tenant {proposal.owner.tenant} {proposal.id} "
            "granted|denied",
            markup=False,
            soft_wrap=True,
        )
    else:
        gate = f", approval {status.gate}" if status is not None and status.gate != "none" else ""
        _moved(proposal, False, gate)


@proposals_app.command("apply")
def apply(
    tenant: TenantOption,
    proposal_id: IdArgument,
    override: Annotated[
        bool,
        typer.Option("--override", help="approval-gate: install without a grant (recorded)."),
    ] = False,
    artifact_digest: Annotated[
        str | None,
        typer.Option(
            "--artifact-digest",
            help="Apply only if the stored artifact is still this one (sha256:...).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Install the stored artifact as a schedule (approval-gate: once decided).

    direct-rbac installs now; approval-gate waits for decide (or installs with
    --override). Prints the state after and the installed schedule."""
    tenant = _checked_tenant(tenant)
    proposal_id = _checked_id(proposal_id)

    async def act(review: ProposalReview, who: Reviewer) -> tuple[Proposal, ProposalStatus | None]:
        proposal = await review.apply(
            who, proposal_id, override=override, artifact_digest=artifact_digest
        )
        status = None if proposal.state == "applied" else await review.status(proposal)
        return proposal, status

    proposal, status = _review(tenant, proposal_id, act)
    _gated(proposal, status, as_json)


@proposals_app.command("decide")
def decide(
    tenant: TenantOption,
    proposal_id: IdArgument,
    decision: Annotated[
        Literal["granted", "denied"],
        typer.Argument(metavar="granted|denied", help="Grant the pending apply, or deny it."),
    ],
    as_json: JsonOption = False,
) -> None:
    """approval-gate: grant a pending apply (installed now) or deny it.

    A denied apply installs nothing; the proposal stays open."""
    tenant = _checked_tenant(tenant)
    proposal_id = _checked_id(proposal_id)

    async def act(review: ProposalReview, who: Reviewer) -> tuple[Proposal, ProposalStatus | None]:
        proposal = await review.decide(who, proposal_id, decision)
        return proposal, await review.status(proposal)

    proposal, status = _review(tenant, proposal_id, act)
    _gated(proposal, status, as_json)


@proposals_app.command("reject")
def reject(
    tenant: TenantOption,
    proposal_id: IdArgument,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why, for the record (kept in the store).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Reject an open proposal: nothing is installed, and it stays rejected."""
    tenant = _checked_tenant(tenant)
    proposal_id = _checked_id(proposal_id)
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        raise bad_input(f"--reason: at most {MAX_REASON_CHARS} characters")

    async def act(review: ProposalReview, who: Reviewer) -> Proposal:
        return await review.reject(who, proposal_id, reason)

    _moved(_review(tenant, proposal_id, act), as_json)


@proposals_app.command("archive")
def archive(tenant: TenantOption, proposal_id: IdArgument, as_json: JsonOption = False) -> None:
    """Archive an open proposal (a soft delete): nothing is installed.

    An applied proposal cannot be archived."""
    tenant = _checked_tenant(tenant)
    proposal_id = _checked_id(proposal_id)

    async def act(review: ProposalReview, who: Reviewer) -> Proposal:
        return await review.archive(who, proposal_id)

    _moved(_review(tenant, proposal_id, act), as_json)
