"""`adk run agents/assistant` imports `services` from the agent folder itself."""
