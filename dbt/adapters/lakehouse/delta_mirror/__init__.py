"""The Delta log beside a dual-format table: what it can follow (pure) and its IO."""
