"""The append-only event log of each memoryRef, and reading it."""
