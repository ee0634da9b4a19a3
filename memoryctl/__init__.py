"""memoryctl, the operator's command line: one module per command group (main.py holds
the root app)."""
