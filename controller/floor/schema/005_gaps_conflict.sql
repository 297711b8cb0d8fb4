-- A conflict (another record under a seq already taken, docs/backoffice.md "Exactly once") may be found at the
-- very seq whose record opened a gap: a record held past that gap and another one under its seq. Each is a row
-- of `gaps` of its own kind, so the key of a gap takes its kind.
ALTER TABLE gaps DROP CONSTRAINT gaps_table_id_last_seq_seq_key;
ALTER TABLE gaps ADD CONSTRAINT gaps_table_id_last_seq_seq_kind_key UNIQUE (table_id, last_seq, seq, kind);
