package nexmark_test

import (
	"bytes"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/connector/nexmark"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/golden-1000.txt")

const goldenFile = "testdata/golden-1000.txt"

// goldenConfig is the configuration of the golden stream: the benchmark's
// million events with every default. bench/flink's GenCheck uses the same.
var goldenConfig = nexmark.Config{EventsNum: 1_000_000}

// canonical prints one event as a line that the Java port prints the same
// way: "|"-separated fields, times in ms since the epoch, and the long
// random strings (url, extra) as "length:FNV-1a-32 in hex" to keep the
// golden file small.
func canonical(split int, k int64, ev nexmark.Event) string {
	var f []any
	switch ev.Type {
	case nexmark.PersonEvent:
		p := ev.Person
		f = []any{"P", split, k, p.ID, p.Name, p.EmailAddress, p.CreditCard, p.City, p.State, p.DateTime.UnixMilli(), digest(p.Extra)}
	case nexmark.AuctionEvent:
		a := ev.Auction
		f = []any{"A", split, k, a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime.UnixMilli(),
			a.Expires.UnixMilli(), a.Seller, a.Category, digest(a.Extra)}
	case nexmark.BidEvent:
		b := ev.Bid
		f = []any{"B", split, k, b.Auction, b.Bidder, b.Price, b.Channel, digest(b.URL), b.DateTime.UnixMilli(), digest(b.Extra)}
	}
	s := make([]string, len(f))
	for i, v := range f {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, "|")
}

func digest(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%d:%08x", len(s), h.Sum32())
}

// goldenLines returns the first n events of the golden stream in (k, split)
// order, one canonical line each.
func goldenLines(t *testing.T, n int) string {
	g, err := nexmark.NewGenerator(goldenConfig)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range n {
		s, k := i%g.Splits(), int64(i/g.Splits())
		b.WriteString(canonical(s, k, g.Event(s, k)))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestGolden pins the stream: a change to any draw shows here (and must be
// made in bench/flink's port too). Regenerate with -rewrite.
func TestGolden(t *testing.T) {
	got := goldenLines(t, 1000)
	if *rewrite {
		if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDiff(got, string(want)); d != "" {
		t.Fatalf("the stream differs from %s (rerun with -rewrite if intended):\n%s", goldenFile, d)
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return ""
}

// TestJavaPortMatches runs bench/flink's GenCheck, the Java port of the
// generator, for the first 100,000 events and compares its lines with the
// Go generator's (the first 1,000 are the golden file). Maven is slow, so
// it runs only with WEIR_FLINK_BENCH=1 (after a first online
// `mvn -q package` in bench/flink).
func TestJavaPortMatches(t *testing.T) {
	if os.Getenv("WEIR_FLINK_BENCH") != "1" {
		t.Skip("set WEIR_FLINK_BENCH=1 to run the Java generator (needs mvn and a JDK 17)")
	}
	const n = 100_000
	pom, err := filepath.Abs("../../bench/flink/pom.xml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "java.txt")
	cmd := exec.Command("mvn", "-q", "-B", "-o", "-f", pom, "compile", "exec:java", "-Dexec.mainClass=weir.bench.flink.GenCheck",
		fmt.Sprintf("-Dexec.args=--events %d --count %d --out %s", goldenConfig.EventsNum, n, file))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, msg)
	}
	out, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, golden) {
		t.Fatalf("the Java port's first events differ from %s:\n%s", goldenFile, firstDiff(string(out[:min(len(out), len(golden))]), string(golden)))
	}
	if d := firstDiff(string(out), goldenLines(t, n)); d != "" {
		t.Fatalf("the Java port's stream differs from the Go one:\n%s", d)
	}
}
