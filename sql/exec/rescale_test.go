package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
)

// TestRescaleKeepsState checkpoints a GroupAggregate, a Join and semi and
// anti joins on one
// subtask and restores them on three, each keeping its key groups' share
// of the state: every key continues where it left off.
func TestRescaleKeepsState(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	agg := GroupAggOptions{GroupKeys: []int{0}, Aggs: groupAggs}
	join := JoinOptions{Type: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftArity: 2, RightArity: 2}
	semi := SemiJoinOptions{Mode: Semi, LeftKeys: []int{0}, RightKeys: []int{0}}
	anti := SemiJoinOptions{Mode: Anti, LeftKeys: []int{0}, RightKeys: []int{0},
		Condition: func(l, r []any) (bool, error) { return l[1].(int64) <= r[1].(int64), nil }}
	ops := map[string]struct {
		mk    []newStage
		steps []step
		key   [2]KeyFunc
	}{
		"group": {[]newStage{keyedStage(func() (operator.Operator, error) { return NewGroupAggregate(agg) })},
			inputs(changelog(rng, 400, randomGroupRow(rng)), 1), [2]KeyFunc{agg.Key(), agg.Key()}},
		"join": {[]newStage{keyedStage(func() (operator.Operator, error) { return NewJoin(join) })},
			joinSteps(rng), [2]KeyFunc{join.LeftKey(), join.RightKey()}},
		"semi": {[]newStage{keyedStage(func() (operator.Operator, error) { return NewSemiJoin(semi) })},
			joinSteps(rng), [2]KeyFunc{semi.LeftKey(), semi.RightKey()}},
		"anti": {[]newStage{keyedStage(func() (operator.Operator, error) { return NewSemiJoin(anti) })},
			joinSteps(rng), [2]KeyFunc{anti.LeftKey(), anti.RightKey()}},
	}
	for name, o := range ops {
		t.Run(name, func(t *testing.T) {
			_, want := runSteps(t, o.mk, o.steps, nil)
			half := len(o.steps) / 2
			var clock int64
			one := openChain(t, o.mk, &clock, nil)
			feed(t, one, o.steps[:half])
			parts := one.snapshot(t, 1)
			got := one.out.rows()
			const p = 3
			subtasks := make([]*chain, p)
			for i := range subtasks {
				subtasks[i] = openSubtask(t, o.mk, &clock, parts, keygroup.RangeFor(maxPar, p, i))
			}
			for _, s := range o.steps[half:] {
				k := o.key[s.input-1](s.row.Fields)
				c := subtasks[keygroup.OperatorIndex(keygroup.ForKey(k, maxPar), maxPar, p)]
				feed(t, c, []step{s})
				got = append(got, c.out.rows()...)
				c.out.records = nil
			}
			// Across subtasks the interleaving differs; per key it must not.
			if g, w := perKey(got), perKey(want); g != w {
				t.Fatalf("after rescaling, output per key differs:\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func feed(t *testing.T, c *chain, steps []step) {
	t.Helper()
	for _, s := range steps {
		if err := c.process(t, s.input, event.Record{Value: s.row, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatal(err)
		}
	}
}

func joinSteps(rng *rand.Rand) []step {
	mkRow := func() []any { return []any{fmt.Sprint("k", rng.Intn(6)), int64(rng.Intn(4))} }
	l, r := inputs(changelog(rng, 150, mkRow), 1), inputs(changelog(rng, 150, mkRow), 2)
	var out []step
	for len(l) > 0 || len(r) > 0 {
		if len(r) == 0 || (len(l) > 0 && rng.Intn(2) == 0) {
			out, l = append(out, l[0]), l[1:]
		} else {
			out, r = append(out, r[0]), r[1:]
		}
	}
	return out
}

// perKey prints rows grouped by their first field (both operators'
// outputs lead with the key, or a left join's NULL-free left key), in
// order within each key.
func perKey(rows []event.Row) string {
	by := map[string][]string{}
	for _, r := range rows {
		k := formatValue(r.Fields[0])
		by[k] = append(by[k], formatRow(r))
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf("%s: %v\n", k, by[k])
	}
	return s
}
