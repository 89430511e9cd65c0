from retcon.cli import entry

entry()
