"""Fixtures for the base tool tests: the SQL services on SQLite and PostgreSQL."""

from tests.sql_backends import db_url, pg_schema, services

__all__ = ["db_url", "pg_schema", "services"]
