"""The memory store: the MemoryAdapter on PostgreSQL (store.py, the facade), one folder
per concern beneath it. docs/architecture.md lists every module."""
