"""SR-1: the one redaction chokepoint, the entry fields it covers, the vault of registered
secrets, carry-forward of foreign markers."""
