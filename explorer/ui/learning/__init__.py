"""The Learn tab: a table trained live (loss, neighbours, animated map) and the random twin."""
