"""Rewrite spaces/<folder>/{app.py,README.md,requirements.txt} from tough_ner.spaces.space_files
(the repository's Space folders are exactly what `tough-ner space NAME --export DIR` writes,
less the package copy); run after changing the cards or the dependencies:
`PYTHONPATH=. python tools/update_spaces.py`."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tough_ner._util import write_atomic  # noqa: E402
from tough_ner.spaces import SPACES, space_files  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
for name, (folder, *_) in SPACES.items():
    for file, text in space_files(name).items():
        write_atomic(os.path.join(ROOT, "spaces", folder, file), text)
        print(os.path.join("spaces", folder, file))
