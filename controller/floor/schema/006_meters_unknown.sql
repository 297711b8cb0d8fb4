-- A `meters` message the table published as a marked stub (docs/floor.md "Topics": a message larger than the
-- broker's Maximum Packet Size goes with `"oversized": N`, the full payload's size in bytes, and null in place of
-- its `meters`) is kept like any other (controller/floor/store_write.py): its `seq` and `public` still say how far
-- the table had published (controller/floor/report_tool.py `store_states`). Its meters are not known to the store:
-- NULL, never zero (they are in the table's journal, `crisscross meters`).
ALTER TABLE meters ALTER COLUMN meters DROP NOT NULL;
