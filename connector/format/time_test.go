package format

import (
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/types"
)

var timeSchema = []types.Field{
	{Name: "id", Type: types.Type{Kind: types.BigInt, Nullable: true}},
	{Name: "t0", Type: types.Type{Kind: types.Time, Nullable: true}},
	{Name: "t3", Type: types.Type{Kind: types.Time, Precision: 3, Nullable: true}},
}

func clock(h, m, s, ms int) time.Time { return time.Date(1970, 1, 1, h, m, s, ms*1e6, time.UTC) }

// TestTimeJSONAndCSV: Flink's json and csv formats write a TIME as
// "HH:mm:ss", whole seconds (LocalTime.ofSecondOfDay(millis / 1000)), and
// read HH:mm:ss with an optional fraction; a TIME(3) keeps its
// milliseconds on reading, a TIME(0) drops them.
func TestTimeJSONAndCSV(t *testing.T) {
	row := []any{int64(1), clock(7, 8, 9, 0), clock(23, 59, 59, 999)}
	j := &JSON{Fields: timeSchema}
	data, err := j.Encode(row)
	if want := `{"id":1,"t0":"07:08:09","t3":"23:59:59"}`; err != nil || string(data) != want {
		t.Fatalf("json encoded %s %v, want %s", data, err, want)
	}
	back, err := j.Decode([]byte(`{"id":1,"t0":"07:08:09.5","t3":"23:59:59.999"}`))
	if err != nil || !back[1].(time.Time).Equal(clock(7, 8, 9, 0)) || !back[2].(time.Time).Equal(clock(23, 59, 59, 999)) {
		t.Fatalf("json decoded %v %v", back, err)
	}
	c := &CSV{Fields: timeSchema, Delimiter: ','}
	out, err := c.Encode(row)
	if want := "1,07:08:09,23:59:59"; err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("csv encoded %q %v, want %s", out, err, want)
	}
	back, err = c.Decode([]byte("2,00:00:00,12:34:56.007"))
	if err != nil || !back[1].(time.Time).Equal(clock(0, 0, 0, 0)) || !back[2].(time.Time).Equal(clock(12, 34, 56, 7)) {
		t.Fatalf("csv decoded %v %v", back, err)
	}
	for _, bad := range []string{`"24:00:00"`, `"12:60:00"`, `"noon"`, `43200`} {
		_, err := j.Decode([]byte(`{"t0":` + bad + `}`))
		if err == nil || !strings.Contains(err.Error(), `field "t0" (TIME(0))`) {
			t.Errorf("json t0=%s: error %v, want one naming field t0", bad, err)
		}
	}
	if got := Text(clock(1, 2, 3, 40), timeSchema[2].Type); got != "01:02:03.040" {
		t.Errorf("Text of TIME(3) = %q, want 01:02:03.040", got)
	}
}
