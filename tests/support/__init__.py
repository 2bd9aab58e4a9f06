"""What the tests share: model and tokenizer writers, reference answers, Qt fixtures and helpers."""
