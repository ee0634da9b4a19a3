"""memoryctl mcp: the MCP server over stdio, for an agent host that starts it as a
subprocess (Claude Code, Claude Desktop, Cursor; docs/mcp.md has their configuration).

    memoryctl mcp --memory-ref mem://acme/agent-1

The local operator's settings decide who calls: the tenant and the default agent of
``--memory-ref`` (a tool's ``agent_id`` may name another agent of the same tenant), the
database of DATABASE_URL (or the quick start's AGENT_MEMORY_STATE_DIR), the tenant's
registered secrets for SR-1. stdout carries the protocol only; nothing else is printed
there, and no line anywhere carries memory content.
"""

from __future__ import annotations

from memoryctl.cli import MemoryRefOption, checked_ref, open_store, run_action, secrets_vault


def mcp(memory_ref: MemoryRefOption) -> None:
    """Serve this agent's memory to an MCP client over stdio (remember, recall, forget,
    session_start, commitments, proposals) until the client closes the connection."""
    ref = checked_ref(memory_ref)
    run_action(lambda: _serve(ref.tenant, ref.agent))


async def _serve(tenant: str, agent: str) -> None:
    from mcp.server.mcpserver import Context

    from api.mcp.memory_tools import McpCaller, MemoryTools
    from api.mcp.server import build_server
    from memory.redaction.vault import registry_for_tenant

    caller = McpCaller(tenant, agent)

    async def identify(ctx: Context) -> McpCaller:
        return caller  # stdio: the operator who started the server

    vault = secrets_vault()
    async with open_store() as store:
        tools = MemoryTools(store, lambda t: registry_for_tenant(vault, t, "memoryctl-mcp"))
        await build_server(tools, identify).run_stdio_async()
