package expr_test

import (
	"testing"
	"time"

	"github.com/weirstream/weir/sql/expr"
)

// TestIsCurrentTimestamp: the clock's TIMESTAMP_LTZ(3) functions as they
// are, on the default clock, say so (a projection then gives their column
// CurrentTimestamp of its own reading); anything built on them, another
// clock function, or a scope with a clock of its own does not. And
// CurrentTimestamp of an instant's millisecond is what Eval gives at that
// instant.
func TestIsCurrentTimestamp(t *testing.T) {
	for src, want := range map[string]bool{
		"PROCTIME()": true, "CURRENT_TIMESTAMP": true, "NOW()": true, "CURRENT_ROW_TIMESTAMP()": true,
		"LOCALTIMESTAMP": false, "CURRENT_DATE": false, "PROCTIME() + INTERVAL '1' SECOND": false,
		"CAST(PROCTIME() AS TIMESTAMP(3))": false, "1": false,
	} {
		if got := compile(t, src, &expr.Scope{}).IsCurrentTimestamp(); got != want {
			t.Errorf("%s: IsCurrentTimestamp %v, want %v", src, got, want)
		}
	}
	at := time.Date(2024, 2, 29, 23, 59, 59, 999_999_999, time.FixedZone("x", 3600))
	own := compile(t, "PROCTIME()", &expr.Scope{Now: func() time.Time { return at }})
	if own.IsCurrentTimestamp() {
		t.Error("PROCTIME() on a scope's own clock: IsCurrentTimestamp, want not (its clock is the scope's)")
	}
	v, err := own.Eval(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := expr.CurrentTimestamp(at.UnixMilli()); got != v {
		t.Fatalf("CurrentTimestamp(%d) = %#v, want Eval's %#v", at.UnixMilli(), got, v)
	}
}
