"""Jepsen-style fault injection for the run ledger, waiting points and the host API:
workers on one PostgreSQL database, random operations and kills, a recorded history,
and a checker of the exactly-once promise over the history and the database."""
