package mysqlcdc

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/types"
)

// go-mysql reads every binlog integer signed, by its storage width (a
// MEDIUMINT as an int32); an UNSIGNED column's value past the signed range
// must read as the snapshot reads it, in the type Flink CDC maps it to.
func TestBinlogUnsignedIntegers(t *testing.T) {
	smallint, dec20 := types.Type{Kind: types.SmallInt}, types.Type{Kind: types.Decimal, Precision: 20, Scale: 0}
	for _, tc := range []struct {
		dataType string
		t        types.Type
		v        any
		want     string
	}{
		{"tinyint", smallint, int8(-1), "255"},
		{"smallint", intT, int16(-1), "65535"},
		{"mediumint", intT, int32(-1), "16777215"},
		{"mediumint", intT, int32(-8388608), "8388608"},
		{"int", bigint, int32(-1), "4294967295"},
		{"bigint", dec20, int64(-1), "18446744073709551615"},
		{"bigint", dec20, int64(-9223372036854775808), "9223372036854775808"},
		{"bigint", dec20, int64(42), "42"},
		{"bigint", types.Type{Kind: types.Double}, int64(-1), "1.8446744073709552e+19"},
		{"bigint", bigint, int64(-1), "error: 18446744073709551615 is out of range for BIGINT (declare a BIGINT UNSIGNED column DECIMAL(20, 0))"},
		{"int", intT, int32(-1), "error: 4294967295 is out of range for INT"},
	} {
		tc.t.Nullable = true
		c := &converter{cols: []column{{name: "c", t: tc.t, dataType: tc.dataType, unsigned: true}}, tz: time.UTC}
		v, err := c.fromBinlog(0, tc.v)
		got := fmt.Sprint(v)
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tc.want {
			t.Errorf("%s UNSIGNED as %s, binlog %T(%v): got %s, want %s", tc.dataType, tc.t, tc.v, tc.v, got, tc.want)
		}
	}
}
