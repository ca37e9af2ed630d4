"""The core layer of shuffledp (docs/architecture.md)."""
