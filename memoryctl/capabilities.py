"""memoryctl capabilities: the openwop discovery document, computed from the live state
by the code the HTTP API serves it with (runtime/probe.py, api/discovery.py). One top-level
command, no group.

    memoryctl capabilities [--json]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from memoryctl.cli import (
    JsonOption,
    console,
    database_target,
    open_store,
    print_json,
    run_action,
    temporal_client_made,
)
from runtime.settings import Settings

if TYPE_CHECKING:
    from schemas.discovery import ComponentStatus, DiscoveryDocument


def capabilities(as_json: JsonOption = False) -> None:
    """Probe the database, Temporal and a worker on the task queue, and print what this
    host can do now: the eight memory dimensions and each component's status (--json:
    the document GET /.well-known/openwop serves).

    Exits 0 whenever the probe ran, also when a component is down: the document says so
    (a database that cannot be reached gives memory.supported false and every dimension
    unavailable; Temporal or the worker down gives compaction, distillation and
    commitments unavailable). Exit 2 only for a malformed DATABASE_URL."""

    document = run_action(_discover)
    if as_json:
        print_json(document.to_wire())
        return
    host = document.host
    console.print(f"{host.name} {host.version}, task queue {host.task_queue}", markup=False)
    table = Table("memory dimension", "available")
    for dimension, available in document.memory_dimensions.items():
        table.add_row(str(dimension), "yes" if available else "no")
    console.print(table)

    status = document.x_host_status
    for name, component, where in (
        ("database", status.database, database_target()),
        ("temporal", status.temporal, Settings().temporal_address),
        ("worker", status.worker, f"task queue {host.task_queue}"),
    ):
        console.print(_status_line(name, component, where), markup=False, soft_wrap=True)


def _status_line(name: str, component: ComponentStatus, where: str) -> str:
    """ "temporal: unavailable at 127.0.0.1:7233 (unreachable (RuntimeError))": this
    machine's own settings say where it looked (the HTTP discovery document does not)."""
    state = "available" if component.available else "unavailable"
    return f"{name + ':':<10}{state} at {where} ({component.detail})"


async def _discover() -> DiscoveryDocument:
    from api.discovery import discovery_document
    from memory.store import StoreLimits
    from runtime.client import connect
    from runtime.probe import HostProbe

    settings = Settings()
    async with open_store() as store:
        temporal_client_made()
        probe = HostProbe(
            store,  # the database probe is the store's ping
            lambda: connect(settings, lazy=True),
            namespace=settings.temporal_namespace,
            task_queue=settings.task_queue,
        )
        state = await probe.state()
        semantic = store.searches.semantic
    return discovery_document(
        state,
        task_queue=settings.task_queue,
        max_entry_bytes=StoreLimits().max_content_bytes,
        semantic_search=semantic,
        proposal_activation=settings.proposal_activation,
    )
