"""The ops the emulator implements, grouped by kind (one module per group)."""
