"""What every process shares: settings, the Temporal client and data converter, payload
encryption, search attributes, health, metrics, tracing and logs."""
