package expr

import (
	"regexp"
	"slices"
	"testing"
)

// simpleCases are patterns with texts; each pattern's simple matcher,
// when it has one, must find what regexp finds.
var simpleCases = []struct {
	pattern string
	simple  bool // whether newSimpleRE takes it
	texts   []string
}{
	{`(&|^)channel_id=([^&]*)`, true, []string{"", "channel_id=", "channel_id=42", "a=1&channel_id=7&b=2", "xchannel_id=1",
		"https://www.nexmark.com/a/b/item.htm?query=1&channel_id=1234", "&channel_id=&channel_id=2", "&&channel_id=é\xff&"}},
	{`^ab+`, true, []string{"", "a", "ab", "abbbc", "xab"}},
	{`(a|ab)c`, true, []string{"abc", "ac", "xxabc", "ab"}},
	{`k=(\d{2,3})`, true, []string{"k=1", "k=12", "k=12345", "k=k=99", "ķ=12k=34"}},
	{`(x)?y`, false, []string{"y", "xy"}},
	{`.*=`, false, []string{"a=b"}},
	{`id=(.*)`, true, []string{"id=\n", "id=ab\ncd", "xid=", "é\xffid=\xffé"}},
	{`(?i)abc`, false, []string{"ABC"}},
	{`a$`, true, []string{"a", "ba", "ab", "a\n"}},
	{`(é|\x{FFFD})x`, true, []string{"\xffx"}},
	{`[^&]+$`, true, []string{"", "&", "a&b", "é\xff", "&&"}},
	{`(^|,)(a|b)(,|$)`, true, []string{"a", ",b,", "c,a", "ab", "c,ab,b"}},
	{`a*?`, false, []string{"aaa"}},
	{`a+b`, false, []string{"aab"}},
	{`(?i)k=(v+)`, false, []string{"K=V"}},
}

func TestSimpleREMatchesRegexp(t *testing.T) {
	for _, c := range simpleCases {
		if got := newSimpleRE(c.pattern) != nil; got != c.simple {
			t.Errorf("newSimpleRE(%q) != nil is %v, want %v", c.pattern, got, c.simple)
		}
		for _, s := range c.texts {
			checkSimpleRE(t, c.pattern, s)
		}
	}
}

// FuzzSimpleRE compares the simple matcher with regexp on any pattern
// it takes and any text.
func FuzzSimpleRE(f *testing.F) {
	for _, c := range simpleCases {
		for _, s := range c.texts {
			f.Add(c.pattern, s)
		}
	}
	f.Fuzz(checkSimpleRE)
}

func checkSimpleRE(t *testing.T, pattern, s string) {
	m := newSimpleRE(pattern)
	if m == nil {
		return
	}
	re := regexp.MustCompile(pattern) // newSimpleRE parses only what compiles
	want := re.FindStringSubmatchIndex(s)
	if got := m.submatch(s, nil); !slices.Equal(got, want) {
		t.Fatalf("%q on %q: simple matcher finds %v, regexp %v", pattern, s, got, want)
	}
	if m.ncap != re.NumSubexp() {
		t.Fatalf("%q: %d groups, regexp has %d", pattern, m.ncap, re.NumSubexp())
	}
}
