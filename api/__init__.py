"""The HTTP surface: openwop discovery, inventory and sample seams, and the OpenIntent
RFC-0015 memory REST, as a thin layer over the same store and the same workflows."""
