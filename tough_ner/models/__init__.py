"""The model runner: a model (transformers folder, spaCy pipeline, ``module:function``, JSONL
files of predictions made elsewhere) turned into predictions in a format the conversion layer
reads, batched, on a device, cached on disk by model, split and input; then into ``Batch`` es.
Nothing below this layer knows what a model is."""
from .kinds import KINDS, Model, from_object, load, split_spec
from .runner import Predicted, Split, predict, run

__all__ = ["KINDS", "Model", "Predicted", "Split", "from_object", "load", "predict", "run", "split_spec"]
