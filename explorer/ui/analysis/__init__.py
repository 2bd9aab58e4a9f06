"""Views of the analyses (explain, head comparison, vocabulary statistics): they only show what
the controllers in explorer/app/controllers computed."""
