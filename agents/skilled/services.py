"""`adk run agents/skilled` imports `services` from the agent folder itself."""
