"""Fixtures for the SQL service tests."""

from tests.sql_backends import db_url, pg_schema, services

__all__ = ["db_url", "pg_schema", "services"]
