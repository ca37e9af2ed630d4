"""The apps layer of shuffledp (docs/architecture.md)."""
