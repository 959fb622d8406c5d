"""tools/builtin."""
