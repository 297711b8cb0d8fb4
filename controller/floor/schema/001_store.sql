-- The floor's store (controller/floor/store.py, docs/backoffice.md "The schema"): every table's public journal
-- records, exactly once by (table_id, seq), in the order of each table's `after` chain. Money in integer minor
-- units; times as the records carry them (timestamptz).

-- one row per table heard: the chain's head and what the store did with its messages
CREATE TABLE tables (
    table_id    text PRIMARY KEY,
    last_seq    bigint NOT NULL DEFAULT 0,        -- the seq of the last record stored (0: none yet)
    joined      bigint,                           -- the `after` of the first record stored when not 0 (--join-late)
    stored      bigint NOT NULL DEFAULT 0,        -- records stored
    repeats     bigint NOT NULL DEFAULT 0,        -- messages dropped as repeats (seq at or below last_seq)
    held        integer NOT NULL DEFAULT 0,       -- records waiting in `held` for the records before them
    unread      bigint NOT NULL DEFAULT 0,        -- records stored whose figures could not be read (a stub, bad data)
    in_test     boolean NOT NULL DEFAULT false,   -- within a test round (controller.round.meters: RoundOpened.test)
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- every public record (controller.control.server.public_record), as published on `events`
CREATE TABLE records (
    table_id    text NOT NULL REFERENCES tables,
    seq         bigint NOT NULL,
    after_seq   bigint NOT NULL,
    time        timestamptz,
    kind        text,
    round_no    integer,
    type        text NOT NULL,
    data        jsonb,                            -- null for a stub (`oversized`)
    oversized   integer,                          -- a stub's size in bytes: the record is in the journal only
    test        boolean NOT NULL DEFAULT false,   -- published within test mode (NY 9 NYCRR 5319.58)
    simulated   boolean NOT NULL DEFAULT false,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);
CREATE INDEX records_type ON records (table_id, type, seq);
CREATE INDEX records_time ON records (table_id, time);

-- records heard past a gap (their `after` above the table's last_seq): kept here, stored in `records` once the
-- records before them arrive
CREATE TABLE held (
    table_id    text NOT NULL REFERENCES tables,
    seq         bigint NOT NULL,
    after_seq   bigint NOT NULL,
    message     jsonb NOT NULL,                   -- the `events` payload as received
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);
CREATE INDEX held_after ON held (table_id, after_seq);

-- each gap found: records after `last_seq` up to `after_seq` missing when `seq` arrived; `filled_at` once stored
CREATE TABLE gaps (
    id          bigserial PRIMARY KEY,
    table_id    text NOT NULL REFERENCES tables,
    last_seq    bigint NOT NULL,
    after_seq   bigint NOT NULL,
    seq         bigint NOT NULL,
    kind        text NOT NULL,                    -- 'missing' (after > last) or 'conflict' (after < last)
    found_at    timestamptz NOT NULL DEFAULT now(),
    filled_at   timestamptz,
    UNIQUE (table_id, last_seq, seq)
);
CREATE INDEX gaps_open ON gaps (table_id) WHERE filled_at IS NULL;

-- what each metered record adds to the table's lifetime meters (controller.round.meters, the rule of
-- `crisscross meters`): SeatSettled, RoundClosed, RoundVoided outside test rounds
CREATE TABLE figures (
    table_id        text NOT NULL,
    seq             bigint NOT NULL,
    time            timestamptz NOT NULL,
    rounds_closed   integer NOT NULL DEFAULT 0,
    rounds_no_play  integer NOT NULL DEFAULT 0,
    rounds_voided   integer NOT NULL DEFAULT 0,
    rounds_test     integer NOT NULL DEFAULT 0,
    drop            bigint NOT NULL DEFAULT 0,
    win             bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, seq),
    FOREIGN KEY (table_id, seq) REFERENCES records
);
CREATE INDEX figures_time ON figures (table_id, time);

-- each seat's settled round (SeatSettled outside test rounds): its ante (each) and five-card bonus
CREATE TABLE seat_rounds (
    table_id    text NOT NULL,
    seq         bigint NOT NULL,
    round_no    integer NOT NULL,
    seat        integer NOT NULL,
    time        timestamptz NOT NULL,
    ante        bigint NOT NULL,
    bonus       bigint NOT NULL,
    wagered     bigint NOT NULL,
    player_net  bigint NOT NULL,
    PRIMARY KEY (table_id, seq),
    FOREIGN KEY (table_id, seq) REFERENCES records
);
CREATE INDEX seat_rounds_seat ON seat_rounds (table_id, seat, round_no);

-- each SessionRated (`run --rating`; also on `sessions`) with what it adds to the one before of its session:
-- rounds, the house's actual and exact theoretical win, and the sums of the squared antes and bonuses of the
-- seat's rounds it covers (the variance's weights: controller.floor.report), and the handle they add
CREATE TABLE sessions (
    table_id        text NOT NULL,
    seq             bigint NOT NULL,
    time            timestamptz NOT NULL,
    session_key     text NOT NULL,                -- the player's id, or the seat, and the session's first round
    seat            integer NOT NULL,
    player          text NOT NULL,
    first_round     integer NOT NULL,
    last_round      integer NOT NULL,
    rounds          integer NOT NULL,
    actual_win      bigint NOT NULL,
    theoretical_win text NOT NULL,                -- exact, "p/q" minor units
    ended           boolean NOT NULL,
    data            jsonb NOT NULL,
    added_rounds    integer NOT NULL,
    added_actual    bigint NOT NULL,
    added_handle    bigint NOT NULL,              -- the handle (every wager) of the rounds added
    added_theo      text NOT NULL,                -- exact, "p/q"
    ante_squares    numeric NOT NULL,
    bonus_squares   numeric NOT NULL,
    seat_rounds     integer NOT NULL,             -- seat rounds found for `added_rounds` (fewer: a seat changed)
    PRIMARY KEY (table_id, seq),
    FOREIGN KEY (table_id, seq) REFERENCES records
);
CREATE INDEX sessions_key ON sessions (table_id, session_key, seq);
CREATE INDEX sessions_time ON sessions (table_id, time);

-- each SignificantEvent (docs/events.md; also on `significant`)
CREATE TABLE significant (
    table_id    text NOT NULL,
    seq         bigint NOT NULL,
    time        timestamptz NOT NULL,
    code        integer NOT NULL,
    name        text NOT NULL,
    severity    text NOT NULL,
    PRIMARY KEY (table_id, seq),
    FOREIGN KEY (table_id, seq) REFERENCES records
);

-- the lifetime meters published at each round's close on `meters` (retained), by the checkpoint's seq
CREATE TABLE meters (
    table_id    text NOT NULL,
    seq         bigint NOT NULL,
    round_no    integer,
    meters      jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);

-- the materialised totals: `figures` and `sessions` added up per table and quarter hour (UTC), in the
-- transaction that stores their records; a report reads whole quarters here and its edges from the rows
CREATE TABLE totals (
    table_id        text NOT NULL,
    quarter         timestamptz NOT NULL,
    rounds_closed   bigint NOT NULL DEFAULT 0,
    rounds_no_play  bigint NOT NULL DEFAULT 0,
    rounds_voided   bigint NOT NULL DEFAULT 0,
    rounds_test     bigint NOT NULL DEFAULT 0,
    drop            bigint NOT NULL DEFAULT 0,
    win             bigint NOT NULL DEFAULT 0,
    ratings         bigint NOT NULL DEFAULT 0,
    rated_rounds    bigint NOT NULL DEFAULT 0,
    rated_actual    bigint NOT NULL DEFAULT 0,
    rated_drop      bigint NOT NULL DEFAULT 0,
    ante_squares    numeric NOT NULL DEFAULT 0,
    bonus_squares   numeric NOT NULL DEFAULT 0,
    seat_rounds     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, quarter)
);
