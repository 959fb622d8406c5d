"""Fixtures for the SQL service tests."""

from tests.sql_backends import db_url, migrated_store, pg_schema, services

__all__ = ["db_url", "migrated_store", "pg_schema", "services"]
