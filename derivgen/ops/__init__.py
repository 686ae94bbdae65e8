"""The ops layer: hand-written non-elementwise forwards, backward helper functions, composites,
argument binding, factories, in-place and indexing rules. The generated library builds on it."""
