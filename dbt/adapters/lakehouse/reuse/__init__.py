"""Build only what changed: a node reused when its statement, its settings and every table it
reads are where they were at its last build (docs/reuse.md)."""
