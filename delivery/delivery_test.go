package delivery

import "testing"

func TestParseRoundTrips(t *testing.T) {
	for _, g := range []Guarantee{ExactlyOnce, AtLeastOnce, None} {
		if got, err := Parse(g.String()); err != nil || got != g {
			t.Errorf("Parse(%q) = %v, %v", g.String(), got, err)
		}
	}
	if got, err := Parse("EXACTLY_ONCE"); err != nil || got != ExactlyOnce {
		t.Errorf("Parse(EXACTLY_ONCE) = %v, %v", got, err)
	}
	want := `"maybe" is not a delivery guarantee (use 'exactly-once', 'at-least-once' or 'none')`
	if _, err := Parse("maybe"); err == nil || err.Error() != want {
		t.Errorf("Parse(maybe) error = %v", err)
	}
}
