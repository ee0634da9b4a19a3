"""The MCP server: an agent's memory as Model Context Protocol tools, over stdio
(memoryctl mcp) and streamable HTTP (/mcp on the API), through the store's own calls."""
