"""Random vs trained: a random twin of a model's matrix, and an embedding table learned live.

`twin` generates the twin lazily; `contrast` states the difference in numbers; `corpus`,
`skipgram` and `trainer` train a fresh table on the bundled corpus as a generator of epochs, and
`measures` says how far it has learned.
"""
