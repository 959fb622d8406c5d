"""skills."""
