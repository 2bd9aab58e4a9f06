"""Nearest neighbours over the whole vocabulary: exact scans, the fast index, query vectors."""
