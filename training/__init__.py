"""Model training for the reader (not installed with the product; see docs/development.md)."""
