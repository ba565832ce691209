"""Widgets that own their DEFAULT_CSS."""
