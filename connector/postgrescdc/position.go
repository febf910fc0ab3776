package postgrescdc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/jackc/pglogrepl"
)

// Position is the checkpointed state of the table's one split: where the
// snapshot and the replication stream are, exactly after the last row the
// reader emitted. It is pure data; the reader advances it as it emits.
type Position struct {
	// Slot is the replication slot's consistent point: the stream starts
	// there, and the first snapshot read the table as of it.
	SlotStart pglogrepl.LSN `json:"slot_start"`
	// Snapshotting: the snapshot has not been read to its end. LastKey is
	// the primary key of the last snapshot row emitted (nil: none yet).
	Snapshotting bool  `json:"snapshotting"`
	LastKey      []any `json:"last_key,omitempty"`
	// Bands say which snapshot each key range was read from (see Band).
	Bands []Band `json:"bands,omitempty"`
	// Done is the end LSN of the last transaction emitted whole: the
	// stream resumes there. Zero while snapshotting.
	Done pglogrepl.LSN `json:"done"`
	// InTxn and Emitted: the changes of the transaction committed at
	// InTxn that were emitted already (a checkpoint in the middle of a
	// transaction); zero when none.
	InTxn   pglogrepl.LSN `json:"in_txn,omitempty"`
	Emitted int           `json:"emitted,omitempty"`
}

// Band is a key range read by one snapshot: the keys above After (every key
// when After is nil) up to the next band's After, read as of At. A change
// to such a key in a transaction that committed before At is in the rows
// read already and is skipped; later ones are emitted. The first snapshot
// is one band at the slot's consistent point, which the stream starts
// from, so it skips nothing; a snapshot resumed after a failure adds a
// band at the consistent point of a new exported snapshot.
type Band struct {
	After []any         `json:"after"`
	At    pglogrepl.LSN `json:"at"`
}

// addBand records that the keys above after are read again as of at: it
// replaces the bands starting at or above after (their keys are read
// again).
func addBand(bands []Band, after []any, at pglogrepl.LSN, cmp func(a, b []any) int) []Band {
	var out []Band
	for _, b := range bands {
		if b.After == nil || (after != nil && cmp(b.After, after) < 0) {
			if b.After == nil && after == nil {
				continue
			}
			out = append(out, b)
		}
	}
	return append(out, Band{After: after, At: at})
}

// inSnapshot tells whether a change to key in the transaction committed at
// commit is already in the snapshot rows (so the stream skips it).
func inSnapshot(bands []Band, key []any, commit pglogrepl.LSN, cmp func(a, b []any) int) bool {
	var at pglogrepl.LSN
	for _, b := range bands { // sorted by After, nil first
		if b.After == nil || cmp(key, b.After) > 0 {
			at = b.At
		}
	}
	return commit < at
}

// maxBand is the newest consistent point of bands: past it, nothing is
// skipped any more.
func maxBand(bands []Band) pglogrepl.LSN {
	var m pglogrepl.LSN
	for _, b := range bands {
		m = max(m, b.At)
	}
	return m
}

func encodePosition(p Position) ([]byte, error) { return json.Marshal(p) }

// decodePosition reads a checkpointed position; key values come back as
// JSON values and are made typed again by keyOf.
func decodePosition(b []byte, keyOf func([]any) ([]any, error)) (Position, error) {
	var p Position
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // integer keys stay exact
	if err := d.Decode(&p); err != nil {
		return p, fmt.Errorf("postgres-cdc: checkpointed position %q: %w", b, err)
	}
	var err error
	if p.LastKey != nil {
		if p.LastKey, err = keyOf(p.LastKey); err != nil {
			return p, err
		}
	}
	for i := range p.Bands {
		if p.Bands[i].After != nil {
			if p.Bands[i].After, err = keyOf(p.Bands[i].After); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}
