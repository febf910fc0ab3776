package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
)

// Seeds of the tables made once per process. Nexmark makes them from
// unseeded generators; here they are fixed so that two processes (and the
// Java port) agree. They are far above any event id a run can reach.
const (
	seedText    = 0x7465787400000000 // the 1 MiB text that extras are cut from
	seedHotURL  = 0x686f747500000000 // + i, the four hot URLs
	seedChannel = 0x6368616e00000000 // + c, the URL of channel c
)

const (
	textLen     = 1 << 20
	numChannels = 10000
)

var (
	hotChannels = [4]string{"Google", "Facebook", "Baidu", "Apple"}
	firstNames  = [...]string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames   = [...]string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	cities      = [...]string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	states      = [...]string{"AZ", "CA", "ID", "OR", "WA", "WY"}
)

// tables holds what Nexmark computes once per JVM: the text extras are cut
// from, the four hot URLs and a URL per channel.
type tables struct {
	text         string
	hotURLs      [4]string
	channelNames [numChannels]string
	channelURLs  [numChannels]string
}

var theTables = sync.OnceValue(func() *tables {
	t := &tables{}
	r := seeded(seedText)
	b := make([]byte, textLen)
	for i := range b {
		b[i] = byte('a' + r.intn(26))
	}
	t.text = string(b)
	for i := range t.hotURLs {
		r := seeded(seedHotURL + uint64(i))
		t.hotURLs[i] = baseURL(&r)
	}
	for c := range numChannels {
		r := seeded(seedChannel + uint64(c))
		url := baseURL(&r)
		if r.intn(10) > 0 {
			url += "&channel_id=" + strconv.Itoa(int(channelID(c)))
		}
		t.channelNames[c] = "channel-" + strconv.Itoa(c)
		t.channelURLs[c] = url
	}
	return t
})

// channelID is Java's Math.abs(Integer.reverse(c)), quirks included:
// channel 1 reverses to MinInt32, whose absolute value is itself.
func channelID(c int) int32 {
	v := int32(bits.Reverse32(uint32(c)))
	if v < 0 {
		v = -v // MinInt32 stays negative, as in Java
	}
	return v
}

func baseURL(r *rng) string {
	return "https://www.nexmark.com/" + r.str(5, '_') + "/" + r.str(5, '_') + "/" + r.str(5, '_') + "/item.htm?query=1"
}

// str is Nexmark's nextString: 3 to maxLen−1 characters, each the special
// character with probability 1/13 and otherwise a lowercase letter, then
// trimmed of spaces at both ends.
func (r *rng) str(maxLen int, special byte) string {
	n := 3 + r.intn(maxLen-3)
	var buf [128]byte // on the stack: the string below is the one copy
	b := buf[:0]
	if n > len(buf) {
		b = make([]byte, 0, n)
	}
	b = b[:n]
	for i := range b {
		if r.intn(13) == 0 {
			b[i] = special
		} else {
			b[i] = byte('a' + r.intn(26))
		}
	}
	return strings.Trim(string(b), " ")
}

// extra is Nexmark's nextExtra: text whose length brings cur to avg on
// average (uniform on avg−cur ± 20 %), cut from the shared text at a random
// offset. Strings share memory with the text, so an extra costs no copy.
func (r *rng) extra(cur, avg int) string {
	if cur > avg {
		return ""
	}
	d := avg - cur
	delta := int(math.Round(float64(d) * 0.2))
	n := d - delta
	if delta != 0 {
		n += r.intn(2 * delta)
	}
	off := r.intn(textLen - n)
	return theTables().text[off : off+n]
}
