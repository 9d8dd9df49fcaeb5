"""Inventory: YAML loading with positions, the pydantic schema, the hardware catalog."""
