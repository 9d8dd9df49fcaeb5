"""fabgen: one GPU-cluster inventory in, every file its network needs out."""

__version__ = "0.1.0"
