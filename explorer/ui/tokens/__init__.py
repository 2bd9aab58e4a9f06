"""The tokenizer pane: text tokenized as you type, the tokens as chips, and Find token."""
