"""Widgets that several features share: tables and labels that paint cheaply, progress, theme."""
