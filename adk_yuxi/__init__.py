"""adk_yuxi: the Yuxi platform's tool system on Google's Agent Development Kit."""

__version__ = "0.1.0"

__all__ = ["__version__"]
