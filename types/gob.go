package types

import (
	"encoding/gob"
	"time"

	"github.com/shopspring/decimal"
)

// The run-time values of SQL types that encoding/gob does not know by
// itself are registered with it: a SQL row is an event.Row whose fields
// are interfaces, and the runtime writes rows in flight through gob when
// it persists them as an unaligned checkpoint's channel state. A restore
// in a new process (a `weir run` after a crash) decodes them there, so the
// registration must happen at start-up, not when a row is first written.
// Without it a DECIMAL field failed the checkpoint ("gob: type not
// registered for interface: decimal.Decimal").
func init() {
	for _, v := range []any{decimal.Decimal{}, time.Time{}, map[any]any(nil), []any(nil), MultisetValue(nil)} {
		gob.Register(v)
	}
}
