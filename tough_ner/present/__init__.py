"""What a person reads: findings, glossary, bucket labels, error tables, exports, the report, its HTML page and the Spaces; views over results, never recomputing them."""
