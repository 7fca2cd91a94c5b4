"""``python -m tough_ner.cli``: the command, with its process settings."""
import sys

from . import main

sys.exit(main(as_command=True))
