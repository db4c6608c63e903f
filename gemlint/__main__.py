from gemlint.cli import entry

entry()
