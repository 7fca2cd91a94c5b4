"""tough-ner `hardeval` metric for evaluate; the code lives in the tough_ner package."""
from tough_ner.metrics.hardeval import Hardeval
