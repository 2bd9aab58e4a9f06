"""Two models side by side: aligned vocabularies, neighbours in each, aligned maps."""
