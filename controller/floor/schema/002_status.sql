-- Each table's latest `status` (docs/floor.md "Topics": `online` retained when its service connects, `offline`
-- retained when it stops, and the same `offline` as the last will the broker sends when the service goes away
-- without saying so), kept by the store (controller/floor/store.py) for the pit page (controller/floor/serve_data.py,
-- docs/backoffice.md "The pit page"). One row per table, replaced at each status received.

-- not a reference to `tables`: a table's status may come before any of its records
CREATE TABLE table_status (
    table_id    text PRIMARY KEY,
    status      text NOT NULL CHECK (status IN ('online', 'offline')),  -- the payload, as published
    received_at timestamptz NOT NULL,             -- when the store took it from the broker (the store's clock)
    retained    boolean NOT NULL                  -- the broker's retained message, sent at the store's subscription:
                                                  -- the status was set at or before received_at
);
