"""The store's schema history (Alembic); memory/storage/engines.py runs it to head."""
