"""SR-1 at the HTTP write path: every write is redacted with the tenant's registered
secrets, as worker-side writes are. A registry compiles its matcher once, so it is kept
per tenant and rebuilt only when the vault's secrets for that tenant change."""

from __future__ import annotations

from memory.redaction.chokepoint import MemorySecretRegistry
from memory.redaction.vault import SecretVault, registry_for_tenant


class TenantRegistries:
    def __init__(self, vault: SecretVault) -> None:
        self.vault = vault
        self._built: dict[str, tuple[frozenset[tuple[str, str]], MemorySecretRegistry]] = {}

    def for_tenant(self, tenant: str) -> MemorySecretRegistry:
        secrets = frozenset(self.vault.secrets_for(tenant).items())
        built = self._built.get(tenant)
        if built is None or built[0] != secrets:
            built = (secrets, registry_for_tenant(self.vault, tenant, run_id="http"))
            self._built[tenant] = built
        return built[1]
