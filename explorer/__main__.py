from explorer.cli import entry

entry()
