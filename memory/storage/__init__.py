"""The database plumbing every concern shares: tables, engines, the Database handle,
prepared reads, locks, the tenant scope helper (CTI-1)."""
