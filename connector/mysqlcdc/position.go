package mysqlcdc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// BinlogPos is a place in the server's binlog: a file and a byte offset in
// it. Positions of one server order by file (the names carry a zero-padded
// sequence number), then offset.
type BinlogPos struct {
	File string `json:"file"`
	Pos  uint32 `json:"pos"`
}

// IsZero tells whether p is unset.
func (p BinlogPos) IsZero() bool { return p.File == "" }

// Compare orders two positions.
func (p BinlogPos) Compare(q BinlogPos) int {
	if c := strings.Compare(p.File, q.File); c != 0 {
		return c
	}
	switch {
	case p.Pos < q.Pos:
		return -1
	case p.Pos > q.Pos:
		return 1
	}
	return 0
}

// String prints the position as file:offset (mysql-bin.000003:4711), the
// form the source's log lines and errors use.
func (p BinlogPos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Pos) }

// Position is the checkpointed state of one split — a primary-key range of
// the table — exactly after the last row the reader emitted for it. It is
// pure data; the reader advances it as it emits.
type Position struct {
	// Lo and Hi bound the split's keys: Lo <= key < Hi (nil: unbounded).
	Lo []any `json:"lo,omitempty"`
	Hi []any `json:"hi,omitempty"`
	// Start is where the split's stream starts: the binlog position of
	// the consistent snapshot its keys were first read at (zero: a fresh
	// split, nothing read yet).
	Start BinlogPos `json:"start"`
	// Snapshotting: the split's snapshot has not been read to its end.
	// LastKey is the key of the last snapshot row emitted (nil: none).
	Snapshotting bool  `json:"snapshotting,omitempty"`
	LastKey      []any `json:"last_key,omitempty"`
	// Bands say which snapshot each key range was read from (see Band).
	Bands []Band `json:"bands,omitempty"`
	// Done is the end of the last transaction emitted whole (or the
	// snapshot's point): the stream resumes there. GTID is that
	// transaction's MariaDB GTID (domain-server-sequence), for reference.
	// GTIDPos is MariaDB's GTID position at Done (the last GTID of every
	// replication domain, as gtid_slave_pos): when set, a restore starts
	// the binlog there by GTID rather than by file and offset.
	Done    BinlogPos `json:"done"`
	GTID    string    `json:"gtid,omitempty"`
	GTIDPos string    `json:"gtid_pos,omitempty"`
	// InTxn and Emitted: the split's changes of the transaction that
	// starts at InTxn that were emitted already (a checkpoint in the
	// middle of a transaction); zero when none.
	InTxn   BinlogPos `json:"in_txn"`
	Emitted int       `json:"emitted,omitempty"`
	// After ('scan.startup.mode' = 'timestamp'): transactions before this
	// Unix time (seconds) are skipped.
	After int64 `json:"after,omitempty"`
}

// Band is a key range read by one consistent snapshot: the split's keys
// above After (every key when After is nil) up to the next band's After,
// read as of At. A transaction starting before At is in those rows
// already and skipped for them. A split read in one go is one band at its
// Start; a snapshot resumed after a failure adds a band at the new
// snapshot's position.
type Band struct {
	After []any     `json:"after"`
	At    BinlogPos `json:"at"`
}

// addBand records that the keys above after are read again as of at.
func addBand(bands []Band, after []any, at BinlogPos) []Band {
	var out []Band
	for _, b := range bands {
		if after != nil && (b.After == nil || compareKeys(b.After, after) < 0) {
			out = append(out, b)
		}
	}
	return append(out, Band{After: after, At: at})
}

// inSnapshot tells whether the transaction starting at txn changed key
// before the snapshot that read key (so the stream skips it).
func inSnapshot(bands []Band, key []any, txn BinlogPos) bool {
	var at BinlogPos
	for _, b := range bands { // sorted by After, nil first
		if b.After == nil || compareKeys(key, b.After) > 0 {
			at = b.At
		}
	}
	return txn.Compare(at) < 0
}

// maxBand is the newest snapshot point of bands: past it nothing is
// skipped any more.
func maxBand(bands []Band) BinlogPos {
	var m BinlogPos
	for _, b := range bands {
		if b.At.Compare(m) > 0 {
			m = b.At
		}
	}
	return m
}

// contains tells whether key lies in the split's range.
func (p *Position) contains(key []any) bool {
	return (p.Lo == nil || compareKeys(key, p.Lo) >= 0) && (p.Hi == nil || compareKeys(key, p.Hi) < 0)
}

// resume is where the split's stream must start, and its GTID position
// when known ("": start by file and offset).
func (p *Position) resume() (BinlogPos, string) {
	if p.Snapshotting || p.Done.IsZero() {
		return p.Start, ""
	}
	return p.Done, p.GTIDPos
}

func encodePosition(p Position) ([]byte, error) { return json.Marshal(p) }

// decodePosition reads a checkpointed position; key values come back as
// JSON values and are made typed again by keyOf.
func decodePosition(b []byte, keyOf func([]any) ([]any, error)) (Position, error) {
	var p Position
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // integer keys stay exact
	if err := d.Decode(&p); err != nil {
		return p, fmt.Errorf("mysql-cdc: checkpointed position %q: %w", b, err)
	}
	for _, k := range []*[]any{&p.Lo, &p.Hi, &p.LastKey} {
		if err := typeKey(k, keyOf); err != nil {
			return p, err
		}
	}
	for i := range p.Bands {
		if err := typeKey(&p.Bands[i].After, keyOf); err != nil {
			return p, err
		}
	}
	return p, nil
}

func typeKey(k *[]any, keyOf func([]any) ([]any, error)) error {
	if *k == nil {
		return nil
	}
	v, err := keyOf(*k)
	*k = v
	return err
}
