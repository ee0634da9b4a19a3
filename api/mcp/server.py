"""The MCP server (the official ``mcp`` SDK's MCPServer): an agent's memory as tools its
host already knows how to wire (Claude Code, Claude Desktop, Cursor, agent frameworks).
One server definition serves both transports: ``memoryctl mcp`` over stdio, and the API
at ``/mcp`` over streamable HTTP (api/mcp/http.py).

The tools are thin: each names its arguments with a JSON schema and a description an LLM
can act on, resolves who is calling (``Identify``: an API key over HTTP, the operator's
configuration over stdio), and calls api/mcp/memory_tools.py, which calls the store. Bad
input (a wrong type, an oversize text, a malformed ref or id, an id of no entry of this
agent) is answered as a tool error result naming the argument; the server keeps serving
and nothing is half-written (each tool is one store call, atomic). No log line carries an
argument's value.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field, ValidationError

from api.mcp.memory_tools import DEFAULT_RECALL_TOKENS, MAX_RECALL_TOKENS, McpCaller, MemoryTools
from schemas.errors import InvalidInput, MemoryError_
from schemas.memory_entry import MAX_TAGS

Identify = Callable[[Context], Awaitable[McpCaller]]
SERVER_NAME = "agent-memory"
INSTRUCTIONS = (
    "Long-term memory for this agent. Call session_start at the beginning of a task, "
    "recall before answering from memory, remember what the user tells you to keep "
    "(pass supersedes with the id of the entry a new value replaces), and forget what "
    "the user asks you to forget. Entries marked superseded_by or conflicts_with hold "
    "a value that changed: prefer the newer one."
)
AgentId = Annotated[
    str | None,
    Field(
        default=None,
        description="The agent whose memory to use; defaults to this connection's agent.",
        max_length=64,
    ),
]
TokenBudget = Annotated[
    int,
    Field(
        default=DEFAULT_RECALL_TOKENS,
        ge=1,
        le=MAX_RECALL_TOKENS,
        description="The most tokens (cl100k_base) of entry text to return.",
    ),
]
Tags = Annotated[list[str], Field(default_factory=list, max_length=MAX_TAGS)]


# The store names its own fields; a tool's caller knows its arguments.
_ARGUMENTS = {"content": "text", "memoryRef": "agent_id", "tags_all": "tags"}


class UnknownCaller(Exception):
    """The connection carries no identity this server accepts."""


def _refused(field: str, rule: str) -> CallToolResult:
    text = f"invalid_input: {field}: {rule}"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _answer(result: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
        structured_content=result,
    )


async def _call(
    identify: Identify,
    ctx: Context,
    tool: Callable[..., Awaitable[dict[str, Any]]],
    **arguments: Any,
) -> CallToolResult:
    """``tool`` for the caller ``ctx`` identifies: its result, or its refusal as an
    error result naming the argument."""
    try:
        return _answer(await tool(await identify(ctx), **arguments))
    except InvalidInput as error:
        return _refused(_ARGUMENTS.get(error.field, error.field), error.rule)
    except UnknownCaller as error:
        return _refused("authorization", str(error))
    except MemoryError_ as error:  # the store's other refusals: code and message, no content
        return CallToolResult(
            content=[TextContent(type="text", text=f"{error.code}: {error}")], is_error=True
        )


class MemoryServer(MCPServer):
    """The SDK's server, answering what it refuses without echoing the caller's data: an
    unknown tool names the tools there are, and arguments that fail their schema name
    the argument and the rule, never the value sent (the SDK's own message quotes it)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        if self._tool_manager.get_tool(name) is None:
            known = sorted(tool.name for tool in self._tool_manager.list_tools())
            text = f"unknown_tool: this server has {', '.join(known)}"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if not isinstance(error.__cause__, ValidationError):
                raise
            problem = error.__cause__.errors()[0]
            field = ".".join(str(part) for part in problem["loc"]) or "arguments"
            return _refused(field, problem["msg"])


def build_server(tools: MemoryTools, identify: Identify) -> MCPServer:
    server = MemoryServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    # The SDK logs a tool's unexpected exception with its traceback; its arguments are
    # memory content, so those records stay out of the logs.
    logging.getLogger("mcp.server.mcpserver").setLevel(logging.CRITICAL)

    @server.tool()
    async def remember(
        ctx: Context,
        text: Annotated[str, Field(description="What to remember, in plain words.")],
        tags: Tags,
        supersedes: Annotated[
            str | None,
            Field(
                default=None,
                description="The id of an entry this one replaces (a value that changed); "
                "both are kept, the new one is read first.",
            ),
        ] = None,
        agent_id: AgentId = None,
    ) -> CallToolResult:
        """Store something in long-term memory. Secrets the tenant registered are
        redacted before it is stored. Returns the new entry's id."""
        return await _call(
            identify,
            ctx,
            tools.remember,
            text=text,
            tags=tags,
            supersedes=supersedes,
            agent_id=agent_id,
        )

    @server.tool()
    async def recall(
        ctx: Context,
        query: Annotated[str, Field(description="What you want to know, in plain words.")],
        tags: Tags,
        token_budget: TokenBudget = DEFAULT_RECALL_TOKENS,
        exclude_superseded: Annotated[
            bool, Field(default=False, description="Leave out values a later entry replaced.")
        ] = False,
        agent_id: AgentId = None,
    ) -> CallToolResult:
        """The entries most relevant to the query, best first and within the token
        budget. A value that changed comes newest first; the older one is marked
        superseded_by (or conflicts_with when it is unclear which holds)."""
        return await _call(
            identify,
            ctx,
            tools.recall,
            query=query,
            token_budget=token_budget,
            tags=tags,
            exclude_superseded=exclude_superseded,
            agent_id=agent_id,
        )

    @server.tool()
    async def forget(
        ctx: Context,
        ids: Annotated[
            list[str], Field(default_factory=list, description="Ids of entries to forget.")
        ],
        tag: Annotated[
            str | None, Field(default=None, description="Forget every entry with this tag.")
        ] = None,
        agent_id: AgentId = None,
    ) -> CallToolResult:
        """Erase entries by id or by tag, with every copy derived from them (indexes,
        vectors, distilled summaries). Returns how many entries were forgotten."""
        return await _call(identify, ctx, tools.forget, ids=ids, tag=tag, agent_id=agent_id)

    @server.tool()
    async def session_start(
        ctx: Context,
        task: Annotated[
            str | None,
            Field(default=None, description="What this session is about, in plain words."),
        ] = None,
        token_budget: TokenBudget = DEFAULT_RECALL_TOKENS,
        agent_id: AgentId = None,
    ) -> CallToolResult:
        """Start a session: the memory index (counts, tags, which values changed) and
        the entries most relevant to the task (the most recent without one), within the
        token budget."""
        return await _call(
            identify,
            ctx,
            tools.session_start,
            task=task,
            token_budget=token_budget,
            agent_id=agent_id,
        )

    @server.tool()
    async def commitments(
        ctx: Context,
        action: Annotated[
            Literal["list", "cancel", "confirm"],
            Field(description="list them, cancel one, or confirm a proposed one"),
        ] = "list",
        commitment_id: Annotated[
            str | None, Field(default=None, description="Which one, to cancel or confirm.")
        ] = None,
        agent_id: AgentId = None,
    ) -> CallToolResult:
        """The promises found in memory ("remind me Friday at 9"): each fires once, at its
        time or when its condition holds."""
        return await _call(
            identify,
            ctx,
            tools.commitments,
            action=action,
            commitment_id=commitment_id,
            agent_id=agent_id,
        )

    @server.tool()
    async def proposals(
        ctx: Context,
        action: Annotated[
            Literal["list", "show"], Field(description="list them, or show one")
        ] = "list",
        proposal_id: Annotated[
            str | None, Field(default=None, description="Which one, to show.")
        ] = None,
        agent_id: AgentId = None,
    ) -> CallToolResult:
        """Automations learned from repeated requests, waiting for a person's review.
        Read-only here: applying one is a reviewer's act (the review API)."""
        return await _call(
            identify,
            ctx,
            tools.proposals,
            action=action,
            proposal_id=proposal_id,
            agent_id=agent_id,
        )

    @server.resource(
        "memory://{agent_id}/MEMORY-INDEX.json",
        name="memory-index",
        description="The agent's MEMORY-INDEX.json: counts, tags, archives and the facts "
        "that changed, never entry text.",
        mime_type="application/json",
    )
    async def memory_index(agent_id: str, ctx: Context) -> str:
        try:
            caller = await identify(ctx)
            return await tools.memory_index(caller, agent_id)
        except (InvalidInput, UnknownCaller):
            return "{}"  # unknown, unreachable and empty read alike

    return server
