package main

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/nexmark"
)

// The bids of a run, counted straight from the generator: every bid's
// key and row, in order.
func generatorBids(t *testing.T, query string, events int64) (keys []string, rows [][]byte) {
	t.Helper()
	g, err := nexmark.NewGenerator(nexmark.Config{EventsNum: events, FirstEventRate: DefaultTPS, Splits: 1})
	if err != nil {
		t.Fatal(err)
	}
	for k := range events {
		e := g.Event(0, k)
		if e.Type == nexmark.BidEvent {
			keys = append(keys, string(modelShapes[query].key(e.Bid)))
			rows = append(rows, modelRow(e.Bid))
		}
	}
	return keys, rows
}

// The subtasks' bids are the run's bids, each once, each key on one
// subtask only, in the run's order within a subtask.
func TestModelBidsDealEveryBidOnce(t *testing.T) {
	const events = 20000
	for query := range modelShapes {
		keys, rows := generatorBids(t, query, events)
		parts, err := generateModelBids(query, events, 3)
		if err != nil {
			t.Fatal(err)
		}
		owner := map[string]int{}
		next := map[int]int{} // per subtask, the next bid to match
		matched := 0
		for i, k := range keys {
			for p := range parts {
				j := next[p]
				if j >= parts[p].len() {
					continue
				}
				key, row := parts[p].at(j)
				if string(key) != k || !bytes.Equal(row, rows[i]) {
					continue
				}
				if o, ok := owner[k]; ok && o != p {
					t.Fatalf("%s: key %x on subtasks %d and %d", query, k, o, p)
				}
				owner[k] = p
				next[p]++
				matched++
				break
			}
		}
		total := 0
		for p := range parts {
			total += parts[p].len()
		}
		if matched != len(keys) || total != len(keys) {
			t.Fatalf("%s: %d of %d bids matched in order, %d dealt", query, matched, len(keys), total)
		}
	}
}

// stateRows builds the state of query in layout from bids and reads every
// key's rows back, oldest first.
func stateRows(t *testing.T, query, layout string, bids *modelBids) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	list := modelShapes[query].list
	switch {
	case layout == "flat":
		f := flatState(bids, list, 64)
		for k := range f.index {
			out[string(k[:])] = f.rows(k[:])
		}
	case layout == "refs":
		r := refsState(bids, list, 64)
		for k := range r.index {
			out[k] = r.rows(k)
		}
	case layout == "weir" && list:
		for k, elems := range weirLists(bids, 64) {
			for _, e := range elems {
				out[k] = append(out[k], weirRowBytes(e.v.(weirRow)))
			}
		}
	case layout == "weir":
		for k, e := range weirValues(bids, 64) {
			out[k] = [][]byte{weirRowBytes(e.v.(weirRow))}
		}
	case list:
		m, c := modelLists(bids, 64)
		for k, places := range m {
			for _, at := range places {
				out[k] = append(out[k], c.row(at))
			}
		}
	default:
		for k, row := range modelValues(bids, 64) {
			out[k] = [][]byte{row}
		}
	}
	return out
}

// Every layout holds what the query keeps: a list state every row of each
// key in order, a value state each key's last row.
func TestModelStatesHoldWhatTheQueryKeeps(t *testing.T) {
	const events = 20000
	for query, shape := range modelShapes {
		keys, rows := generatorBids(t, query, events)
		want := map[string][][]byte{}
		for i, k := range keys {
			if !shape.list {
				want[k] = nil
			}
			want[k] = append(want[k], rows[i])
		}
		parts, err := generateModelBids(query, events, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := parts[0].offHeap(); err != nil { // as runModel reads them
			t.Fatal(err)
		}
		defer parts[0].release()
		for _, layout := range modelLayouts {
			got := stateRows(t, query, layout, &parts[0])
			if layout == "flat" { // keys padded to 16 bytes
				got = unpadded(got, want)
			}
			if !maps.EqualFunc(got, want, func(a, b [][]byte) bool { return slices.EqualFunc(a, b, bytes.Equal) }) {
				t.Fatalf("%s %s: %d keys, want %d, or their rows differ", query, layout, len(got), len(want))
			}
		}
	}
}

// unpadded maps got's 16-byte keys back to want's shorter ones.
func unpadded(got, want map[string][][]byte) map[string][][]byte {
	out := map[string][][]byte{}
	for k := range want {
		var p [16]byte
		copy(p[:], k)
		if rows, ok := got[string(p[:])]; ok {
			out[k] = rows
		}
	}
	if len(got) != len(out) {
		out["(extra keys)"] = nil
	}
	return out
}

func TestModelMainRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"-query", "q5"}, "-query"},
		{[]string{"-events", "1000,x"}, "-events"},
		{[]string{"-events", "0"}, "-events"},
		{[]string{"-rounds", "0"}, "-rounds"},
		{[]string{"-parallelism", "-1"}, "-parallelism"},
		{[]string{"-layouts", "flat,arena"}, "-layouts"},
		{[]string{"-layouts", "flat, flat"}, "-layouts"},
		{[]string{"-events", "1000,1000"}, "-events"},
		{[]string{"-memory-limit", "0"}, "-memory-limit"},
		{[]string{"-garbage", "-1"}, "-garbage"},
		{[]string{"stray"}, "stray"},
	} {
		var out bytes.Buffer
		err := modelMain(c.args, &out)
		if err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%q: error %v does not name %s", c.args, err, c.name)
		}
		if out.Len() != 0 {
			t.Errorf("%q: printed %q before refusing", c.args, out.String())
		}
	}
}

func TestModelMainPrintsEachRunAndTheChange(t *testing.T) {
	var out bytes.Buffer
	if err := modelMain([]string{"-query", "q18", "-events", "2000,4000", "-rounds", "2", "-garbage", "200"}, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), " ns per event\n"); got != 2*2*len(modelLayouts) {
		t.Fatalf("%d runs printed, want %d:\n%s", got, 2*2*len(modelLayouts), out.String())
	}
	if got := strings.Count(out.String(), "from the first size to the last"); got != len(modelLayouts) {
		t.Fatalf("%d changes printed, want one per layout:\n%s", got, out.String())
	}
}

func TestModelMainHelpIsNoError(t *testing.T) {
	var out bytes.Buffer
	if err := modelMain([]string{"-h"}, &out); err != nil {
		t.Fatalf("-h: %v", err)
	}
}

// A measured run applies every bid of the run and holds every key,
// whatever the layout: runModel counts them from the state it built.
func TestRunModelAppliesEveryBid(t *testing.T) {
	const events = 20000
	for query, shape := range modelShapes {
		keys, _ := generatorBids(t, query, events)
		distinct := map[string]bool{}
		for _, k := range keys {
			distinct[k] = true
		}
		for _, layout := range modelLayouts {
			run, err := runModel(query, layout, events, 2, 100)
			if err != nil {
				t.Fatal(err)
			}
			if run.events != events || run.bids != int64(len(keys)) || run.keys != len(distinct) {
				t.Fatalf("%s %s (list %v): %d events, %d bids, %d keys; want %d, %d, %d",
					query, layout, shape.list, run.events, run.bids, run.keys, events, len(keys), len(distinct))
			}
			if run.user+run.sys <= 0 {
				t.Fatalf("%s %s: no CPU measured", query, layout)
			}
		}
	}
}

func TestModelChangeAndMedian(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if d, p := modelChange(1000, 1250); d != 250 || !near(p, -20) {
		t.Fatalf("1000 -> 1250 ns: %v ns, %v %%; want +250, -20", d, p)
	}
	if d, p := modelChange(1000, 800); d != -200 || !near(p, 25) {
		t.Fatalf("1000 -> 800 ns: %v ns, %v %%; want -200, +25", d, p)
	}
	runs := func(ns ...int64) []modelRun {
		var out []modelRun
		for _, n := range ns {
			out = append(out, modelRun{events: 1, user: time.Duration(n)})
		}
		return out
	}
	for _, c := range []struct {
		runs []modelRun
		want float64
	}{
		{runs(30, 10, 20), 20},
		{runs(40, 10, 30, 20), 25},
		{runs(7), 7},
	} {
		if got := medianNs(c.runs); got != c.want {
			t.Errorf("median of %v: %v, want %v", c.runs, got, c.want)
		}
	}
}
