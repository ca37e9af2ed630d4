"""The interop layer of shuffledp (docs/architecture.md)."""
