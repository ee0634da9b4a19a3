"""When two texts state the same fact, or conflict: the rules consolidation, the distiller
and proposals share."""
