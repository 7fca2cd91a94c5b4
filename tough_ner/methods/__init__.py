"""The five methods (HardEval, TMR, bucket F1, NRB, RockNER's scores) and the paired comparison of systems; each reads a Batch and gives its numbers with per-sentence counts."""
