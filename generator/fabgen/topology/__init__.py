"""Topology: sizing arithmetic, graph builders, structural checks and analysis."""
