package window

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// This file keeps a window's contents in state: adding an element, merging
// windows, and emitting the result when a window fires.

// add folds v into w's contents for the current key.
func (op *Operator) add(w Window, v any) error {
	ns := w.Namespace()
	old, ok := op.contents.Get(ns)
	switch {
	case op.opts.Process != nil:
		// Appending in place is safe even if a snapshot holds old: it
		// captured old's length and never reads past it.
		list, _ := old.([]any)
		op.contents.Put(ns, append(list, v))
		return nil
	case op.opts.Aggregate != nil:
		acc := op.opts.Aggregate.CreateAccumulator()
		if ok {
			var err error
			if acc, err = op.own(ns, old); err != nil {
				return err
			}
		}
		op.contents.Put(ns, op.opts.Aggregate.Add(v, acc))
	default:
		if ok {
			a, err := op.own(ns, old)
			if err != nil {
				return err
			}
			v = op.opts.Reduce(a, v)
		}
		op.contents.Put(ns, v)
	}
	op.owned[op.ownedKey(ns)] = struct{}{}
	return nil
}

// combine merges the contents b into a (session merges). a is owned.
func (op *Operator) combine(a, b any) any {
	switch {
	case op.opts.Process != nil:
		x, y := a.([]any), b.([]any)
		return append(append(make([]any, 0, len(x)+len(y)), x...), y...)
	case op.opts.Aggregate != nil:
		return op.opts.Aggregate.Merge(a, b)
	}
	return op.opts.Reduce(a, b)
}

// fire emits w's result for the current key, stamped w.MaxTimestamp().
func (op *Operator) fire(w Window) error {
	ns := w.Namespace()
	v, ok := op.contents.Get(ns)
	if !ok {
		return nil
	}
	ts := w.MaxTimestamp()
	switch {
	case op.opts.Process != nil:
		key := op.Ctx.Keyed.CurrentKey()
		elems := slices.Clone(v.([]any))
		c := operator.NewCollector(op.Ctx.Output, ts)
		if err := op.opts.Process(key, w, elems, &c); err != nil {
			return fmt.Errorf("window: process function of window %v, key %v: %w", w, key, err)
		}
	case op.opts.Aggregate != nil:
		op.Ctx.Output.Collect(event.Record{Value: op.opts.Aggregate.GetResult(v), Timestamp: ts})
	default:
		op.Ctx.Output.Collect(event.Record{Value: v, Timestamp: ts})
	}
	// Downstream may hold the emitted value (GetResult may return the
	// accumulator itself): a late element must not change it in place.
	op.disown(ns)
	return nil
}

// windows lists the current key's windows that hold state. For a merging
// assigner these are exactly the live sessions (Flink keeps them in a
// separate MergingWindowSet; here the state's keys are that set).
func (op *Operator) windows() ([]Window, error) {
	var ws []Window
	var err error
	op.contents.Range(func(ns string, _ any) bool {
		var w Window
		if w, err = ParseNamespace(ns); err != nil {
			return false
		}
		ws = append(ws, w)
		return true
	})
	return ws, err
}

// mergeGroup returns the merge of w with the current key's live windows.
func (op *Operator) mergeGroup(w Window) (Merge, error) {
	live, err := op.windows()
	if err != nil {
		return Merge{}, err
	}
	for _, m := range op.merging.MergeWindows(append(live, w)) {
		if slices.Contains(m.Members, w) {
			return m, nil
		}
	}
	return Merge{Result: w, Members: []Window{w}}, nil // unreachable for a correct assigner
}

// mergeContents moves the contents of m's members into m.Result, in start
// order, and deletes the members' state and timers. addAndTrigger then
// registers the merged window's timers.
func (op *Operator) mergeContents(m Merge) error {
	var from []Window
	for _, w := range m.Members {
		if op.contents.Contains(w.Namespace()) && !slices.Contains(from, w) {
			from = append(from, w)
		}
	}
	if len(from) == 0 || (len(from) == 1 && from[0] == m.Result) {
		return nil
	}
	slices.SortFunc(from, func(a, b Window) int { return cmp.Compare(a.Start, b.Start) })
	var acc any
	for i, w := range from {
		ns := w.Namespace()
		v, _ := op.contents.Get(ns)
		if i == 0 {
			var err error
			if acc, err = op.own(ns, v); err != nil {
				return err
			}
		} else {
			acc = op.combine(acc, v)
		}
		if w != m.Result {
			op.clear(w)
		}
	}
	ns := m.Result.Namespace()
	op.contents.Put(ns, acc)
	op.owned[op.ownedKey(ns)] = struct{}{}
	return nil
}

func (op *Operator) ownedKey(ns string) ownedKey {
	return ownedKey{key: op.Ctx.Keyed.CurrentKey(), ns: ns}
}

func (op *Operator) disown(ns string) { delete(op.owned, op.ownedKey(ns)) }

// own returns v, the stored value of window ns, if this operator may modify
// it, or a private copy made with the codec. Element lists are never
// modified in place, so they are returned as they are.
func (op *Operator) own(ns string, v any) (any, error) {
	if _, ok := op.owned[op.ownedKey(ns)]; ok || op.opts.Process != nil {
		return v, nil
	}
	b := op.opts.Codec.Encode(nil, v)
	c, _, err := op.opts.Codec.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("window: copying the state of window %s: %w", ns, err)
	}
	return c, nil
}

// listCodec encodes a window's element list: a uvarint count, then each
// element with the element codec.
type listCodec struct{ elem state.Codec[any] }

func (c listCodec) Encode(buf []byte, v any) []byte {
	list, _ := v.([]any)
	buf = binary.AppendUvarint(buf, uint64(len(list)))
	for _, e := range list {
		buf = c.elem.Encode(buf, e)
	}
	return buf
}

func (c listCodec) Decode(b []byte) (any, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, b, fmt.Errorf("%w: window element list: bad count", state.ErrCorrupt)
	}
	rest := b[k:]
	// Each element takes at least one byte: a count beyond the bytes left
	// is corrupt, and must not size an allocation.
	if n > uint64(len(rest)) {
		return nil, b, fmt.Errorf("%w: window element list: %d elements in %d bytes", state.ErrCorrupt, n, len(rest))
	}
	list := make([]any, 0, n)
	for i := uint64(0); i < n; i++ {
		e, r, err := c.elem.Decode(rest)
		if err != nil {
			return nil, b, fmt.Errorf("window element list: element %d: %w", i, err)
		}
		list, rest = append(list, e), r
	}
	return list, rest, nil
}
