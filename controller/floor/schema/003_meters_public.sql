-- The last public record a table had published when it sent a `meters` message (docs/floor.md "Topics": the
-- message's `public`), kept beside the message's `seq` (the record its round's close was checkpointed with, which
-- may be private): the store is behind the table when it has not stored that record
-- (controller/floor/report_tool.py `store_states`, docs/backoffice.md "Exactly once"). NULL for a message of a
-- table that does not send `public` yet: its `seq` stands in.
ALTER TABLE meters ADD COLUMN public_seq bigint;
