"""The core: tag schemes, readers and formats, the Batch, training statistics, span scoring and matching, the resampling engine, input checks."""
