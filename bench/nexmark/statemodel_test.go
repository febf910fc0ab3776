package main

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

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
