"""The ``evaluate`` metric classes: thin glue over the tough_ner modules.

Each concrete class is importable alone (``from tough_ner.metrics.hardeval import Hardeval``),
which is all a Hub-style shim script needs.
"""
