"""`python -m cli`: the same command as the installed `buraco-log`."""

from cli.entry import run

if __name__ == "__main__":
    run()
