"""What a tenant holds besides memory: its API keys and registered agents."""
