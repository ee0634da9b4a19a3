"""The wire shapes: pydantic models of entries, events, capabilities and every workflow
and activity input and output, with their JSON Schema export (schemas/json/)."""
