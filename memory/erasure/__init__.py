"""Forget and TTL reaching every copy of an entry's text, retention and garbage collection."""
