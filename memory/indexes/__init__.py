"""Derived indexes of entry content (vectors), kept in step with it by the content writer."""
