"""What an agent reads back: list/get/tag queries, hybrid search ranking, reads within a
token budget."""
