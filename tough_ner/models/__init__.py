"""The model runner's layer: what turns a model into predictions (here: NER taggers over
pre-tokenised sentences).  Nothing below this layer knows what a model is."""
