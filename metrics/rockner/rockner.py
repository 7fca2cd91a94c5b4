"""tough-ner `rockner` metric for evaluate; the code lives in the tough_ner package."""
from tough_ner.metrics.rockner import Rockner
