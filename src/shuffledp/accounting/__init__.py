"""The accounting layer of shuffledp (docs/architecture.md)."""
