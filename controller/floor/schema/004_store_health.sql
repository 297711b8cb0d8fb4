-- The floor's store's own health (controller/floor/store_health.py, docs/backoffice.md "The store's health"): one
-- row per store, keyed by its MQTT client id, written by the store at most every 2 s: in the transaction of a
-- batch it writes or, when it holds nothing unwritten, in a transaction of its own. A write the database refuses
-- takes the row's update with it, so a row that stops advancing is a store gone or unable to write, which the pit
-- page shows (controller/floor/serve_data.py). A store no longer run keeps its row until it is deleted.
CREATE TABLE store_health (
    store      text PRIMARY KEY,        -- the store's MQTT client id: crisscross-store-NAME (--session NAME)
    host       text NOT NULL,           -- the machine it runs on
    pid        integer NOT NULL,        -- its process id there
    started_at timestamptz NOT NULL,    -- when it started (the store's clock)
    written_at timestamptz NOT NULL,    -- the database's clock at its latest write (clock_timestamp())
    pending    integer NOT NULL,        -- messages received and not written when that write committed
    stored     bigint NOT NULL,         -- records stored since it started
    skipped    bigint NOT NULL,         -- messages acknowledged unwritten since it started: not in the floor's
                                        -- format, or refused alone by the database for their data
    refused    bigint NOT NULL,         -- batch writes the database refused since it started (rolled back, tried again)
    subscribed boolean NOT NULL,        -- connected to the broker and subscribed at that write
    stopped_at timestamptz              -- the database's clock at its clean stop; NULL while it runs
);
