"""Read snapshots: a memoryRef's live entries frozen at one instant."""
