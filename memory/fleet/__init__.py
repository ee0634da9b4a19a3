"""The fleet's selection of agents with work, and maintenance writes that are no new work."""
