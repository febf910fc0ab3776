// Package delivery holds Weir's one delivery-guarantee type, Flink's
// DeliveryGuarantee: what a job promises for its state and, with a
// transactional sink, for its output after failures. It imports nothing of
// Weir's, so the DataStream API, the runtime and connectors share it.
package delivery

import (
	"fmt"
	"strings"
)

// Guarantee is a delivery guarantee. The zero value is ExactlyOnce.
type Guarantee int

const (
	// ExactlyOnce aligns checkpoint barriers, so every record is in
	// exactly one checkpoint; a transactional sink commits its output when
	// the checkpoint completes, so a reader of committed data sees every
	// record once (Flink's EXACTLY_ONCE).
	ExactlyOnce Guarantee = iota
	// AtLeastOnce does not align barriers: records after a barrier may be
	// in the snapshot, so a restore may replay them; sinks flush at every
	// checkpoint and may write a record again, never lose one (Flink's
	// AT_LEAST_ONCE).
	AtLeastOnce
	// None takes no checkpoints: a restart starts afresh, and records may
	// be lost or duplicated (Flink's NONE; at-most-once for the job).
	None
)

// String gives Flink's option value: "exactly-once", "at-least-once" or
// "none" (sink.delivery-guarantee).
func (g Guarantee) String() string {
	switch g {
	case ExactlyOnce:
		return "exactly-once"
	case AtLeastOnce:
		return "at-least-once"
	case None:
		return "none"
	}
	return fmt.Sprintf("Guarantee(%d)", int(g))
}

// Parse reads Flink's option value, case-insensitively, with '-' or '_'
// ("exactly-once", "EXACTLY_ONCE", "at-least-once", "none").
func Parse(s string) (Guarantee, error) {
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce, None} {
		if strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(s), "_", "-"), g.String()) {
			return g, nil
		}
	}
	return 0, fmt.Errorf("%q is not a delivery guarantee (use 'exactly-once', 'at-least-once' or 'none')", s)
}
