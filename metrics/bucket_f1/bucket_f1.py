"""tough-ner `bucket_f1` metric for evaluate; the code lives in the tough_ner package."""
from tough_ner.metrics.bucket_f1 import BucketF1
