"""Shared fixtures: personas (organiser, two assessors) and isolated storage."""
