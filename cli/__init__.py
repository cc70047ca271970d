"""The buraco-log command line (typer). Commands are thin: parse, call the library, format."""
