package filesystem

import (
	"testing"
	"time"
)

// TestPartitionPath checks Hive-style directories as Flink's
// PartitionPathUtils.generatePartitionPath builds them: escaped names and
// values, the default name for NULL and empty values.
func TestPartitionPath(t *testing.T) {
	for _, c := range []struct {
		cols   []string
		values []any
		def    string
		want   string
	}{
		{[]string{"dt", "hm"}, []any{"2024-01-01", "10:15"}, DefaultPartitionName, "dt=2024-01-01/hm=10%3A15"},
		{[]string{"dt"}, []any{nil}, DefaultPartitionName, "dt=__DEFAULT_PARTITION__"},
		{[]string{"dt"}, []any{""}, "none", "dt=none"},
		{[]string{"k"}, []any{"a/b=c d#e%f'g*h?i\\j{k[l]m^n\"o\x01p\x7fq"}, DefaultPartitionName,
			"k=a%2Fb%3Dc d%23e%25f%27g%2Ah%3Fi%5Cj%7Bk%5Bl%5Dm%5En%22o%01p%7Fq"},
		{[]string{"a=b"}, []any{int64(7)}, DefaultPartitionName, "a%3Db=7"},
		{[]string{"ts"}, []any{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}, DefaultPartitionName, "ts=2024-01-02 03%3A04%3A05"},
		{[]string{"u"}, []any{"äü-_.~!@$&()+,;"}, DefaultPartitionName, "u=äü-_.~!@$&()+,;"},
	} {
		if got := PartitionPath(c.cols, c.values, c.def); got != c.want {
			t.Errorf("PartitionPath(%q, %q) = %q, want %q", c.cols, c.values, got, c.want)
		}
	}
}
