package operator

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// TimeDomain tells whether a timer follows event time or processing time.
type TimeDomain uint8

const (
	EventTime TimeDomain = iota
	ProcessingTime
)

// Timer is one registered timer: it fires once for its key, namespace and
// time, however often it was registered (Flink's InternalTimer).
type Timer struct {
	Domain    TimeDomain
	Timestamp event.Timestamp // ms
	Key       any
	KeyGroup  int
	Namespace string // e.g. a window's "start:end"; "" for plain keyed timers
}

type timerID struct {
	domain TimeDomain
	ts     event.Timestamp
	key    any
	ns     string
}

// Triggerable is called when a timer fires, with the timer's key already set
// as the current key of the keyed backend.
type Triggerable interface {
	OnTimer(t Timer) error
}

// TimerService keeps a keyed operator's timers. Timers are state: they are
// snapshotted with the operator and restored by key group.
type TimerService struct {
	keyed      state.KeyedBackend
	keyCodec   state.Codec[any]
	maxPar     int
	target     Triggerable
	queues     [2]timerHeap
	registered map[timerID]bool
	watermark  event.Timestamp
	// pts fires the processing-time timers (see UseProcessingTime); wake
	// is the callback registered there for the earliest of them.
	pts  *ProcessingTimeService
	wake *ProcessingTimer
}

// NewTimerService returns an empty timer service for a keyed operator.
func NewTimerService(keyed state.KeyedBackend, keyCodec state.Codec[any], maxParallelism int) *TimerService {
	return &TimerService{keyed: keyed, keyCodec: keyCodec, maxPar: maxParallelism,
		registered: map[timerID]bool{}, watermark: event.MinWatermark}
}

// SetTriggerable names the operator whose OnTimer fires.
func (s *TimerService) SetTriggerable(t Triggerable) { s.target = t }

// CurrentWatermark is the last watermark the service advanced to.
func (s *TimerService) CurrentWatermark() event.Timestamp { return s.watermark }

// Register adds a timer for the current key; registering an existing one is a no-op.
func (s *TimerService) Register(domain TimeDomain, ts event.Timestamp, namespace string) {
	key := s.keyed.CurrentKey()
	id := timerID{domain, ts, key, namespace}
	if s.registered[id] {
		return
	}
	s.registered[id] = true
	t := Timer{Domain: domain, Timestamp: ts, Key: key, KeyGroup: keygroup.ForKey(key, s.maxPar), Namespace: namespace}
	heap.Push(&s.queues[domain], t)
	s.notifyProcessing(domain)
}

// Delete removes a timer of the current key if it is registered.
func (s *TimerService) Delete(domain TimeDomain, ts event.Timestamp, namespace string) {
	id := timerID{domain, ts, s.keyed.CurrentKey(), namespace}
	if !s.registered[id] {
		return
	}
	delete(s.registered, id)
	q := &s.queues[domain]
	for i, t := range *q {
		if t.Timestamp == ts && t.Namespace == namespace && t.Key == id.key {
			heap.Remove(q, i)
			break
		}
	}
	s.notifyProcessing(domain)
}

// UseProcessingTime makes pts fire the service's processing-time timers:
// the service keeps one callback registered in pts, at its earliest
// processing-time timer, as Flink's InternalTimerServiceImpl does with its
// ProcessingTimeService. The subtask calls it before the operator opens,
// so restored timers are armed too. Without it, the owner calls
// AdvanceProcessingTime itself.
func (s *TimerService) UseProcessingTime(pts *ProcessingTimeService) {
	s.pts = pts
	s.notifyProcessing(ProcessingTime)
}

// notifyProcessing moves the wake-up callback to the earliest
// processing-time timer when that changed.
func (s *TimerService) notifyProcessing(domain TimeDomain) {
	if domain != ProcessingTime || s.pts == nil {
		return
	}
	next := s.NextProcessingTimer()
	if s.wake != nil && s.wake.Time() == next {
		return
	}
	s.wake.Cancel()
	s.wake = nil
	if next != event.MaxWatermark {
		s.wake = s.pts.RegisterTimer(next, s.onWake)
	}
}

// onWake fires every processing-time timer due at now; firing re-arms the
// wake-up for the next one.
func (s *TimerService) onWake(now event.Timestamp) error {
	s.wake = nil
	return s.AdvanceProcessingTime(now)
}

// NextProcessingTimer is the earliest processing-time timer, or
// event.MaxWatermark when there is none.
func (s *TimerService) NextProcessingTimer() event.Timestamp {
	if len(s.queues[ProcessingTime]) == 0 {
		return event.MaxWatermark
	}
	return s.queues[ProcessingTime][0].Timestamp
}

// AdvanceWatermark fires, in time order, every event-time timer at or below wm.
func (s *TimerService) AdvanceWatermark(wm event.Timestamp) error {
	s.watermark = wm
	return s.fireUpTo(EventTime, wm)
}

// AdvanceProcessingTime fires every processing-time timer at or below now.
func (s *TimerService) AdvanceProcessingTime(now event.Timestamp) error {
	err := s.fireUpTo(ProcessingTime, now)
	s.notifyProcessing(ProcessingTime)
	return err
}

func (s *TimerService) fireUpTo(domain TimeDomain, limit event.Timestamp) error {
	q := &s.queues[domain]
	for len(*q) > 0 && (*q)[0].Timestamp <= limit {
		t := heap.Pop(q).(Timer)
		delete(s.registered, timerID{domain, t.Timestamp, t.Key, t.Namespace})
		s.keyed.SetCurrentKey(t.Key, t.KeyGroup)
		if s.target == nil {
			return errors.New("operator: timer fired but no Triggerable is set")
		}
		if err := s.target.OnTimer(t); err != nil {
			return err
		}
	}
	return nil
}

// Len is the number of registered timers in both domains.
func (s *TimerService) Len() int { return len(s.registered) }

// Snapshot captures every timer now; Write encodes them later.
func (s *TimerService) Snapshot() state.Snapshot {
	all := make([]Timer, 0, s.Len())
	all = append(all, s.queues[EventTime]...)
	all = append(all, s.queues[ProcessingTime]...)
	return timerSnapshot{timers: all, codec: s.keyCodec}
}

type timerSnapshot struct {
	timers []Timer
	codec  state.Codec[any]
}

func (ts timerSnapshot) Write() ([]byte, error) {
	buf := binary.AppendUvarint(nil, uint64(len(ts.timers)))
	for _, t := range ts.timers {
		buf = append(buf, byte(t.Domain))
		buf = binary.AppendVarint(buf, t.Timestamp)
		buf = binary.AppendUvarint(buf, uint64(t.KeyGroup))
		buf = binary.AppendUvarint(buf, uint64(len(t.Namespace)))
		buf = append(buf, t.Namespace...)
		buf = ts.codec.Encode(buf, t.Key)
	}
	return buf, nil
}

// Restore adds the timers of every blob whose key group this subtask owns.
func (s *TimerService) Restore(blobs [][]byte) error {
	kgr := s.keyed.KeyGroupRange()
	for _, b := range blobs {
		timers, err := decodeTimers(b, s.keyCodec)
		if err != nil {
			return err
		}
		for _, t := range timers {
			if !kgr.Contains(t.KeyGroup) {
				continue
			}
			id := timerID{t.Domain, t.Timestamp, t.Key, t.Namespace}
			if !s.registered[id] {
				s.registered[id] = true
				heap.Push(&s.queues[t.Domain], t)
			}
		}
	}
	s.notifyProcessing(ProcessingTime)
	return nil
}

var errTimerCorrupt = errors.New("operator: corrupt timer snapshot")

func decodeTimers(b []byte, codec state.Codec[any]) ([]Timer, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errTimerCorrupt
	}
	b = b[k:]
	out := make([]Timer, 0, n)
	for i := uint64(0); i < n; i++ {
		t, rest, err := decodeTimer(b, codec)
		if err != nil {
			return nil, fmt.Errorf("%w: timer %d: %v", errTimerCorrupt, i, err)
		}
		out, b = append(out, t), rest
	}
	return out, nil
}

func decodeTimer(b []byte, codec state.Codec[any]) (Timer, []byte, error) {
	var t Timer
	if len(b) < 1 {
		return t, nil, errTimerCorrupt
	}
	t.Domain, b = TimeDomain(b[0]), b[1:]
	ts, k := binary.Varint(b)
	if k <= 0 {
		return t, nil, errTimerCorrupt
	}
	t.Timestamp, b = ts, b[k:]
	kg, k := binary.Uvarint(b)
	if k <= 0 {
		return t, nil, errTimerCorrupt
	}
	t.KeyGroup, b = int(kg), b[k:]
	nl, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < nl {
		return t, nil, errTimerCorrupt
	}
	t.Namespace, b = string(b[k:k+int(nl)]), b[k+int(nl):]
	key, rest, err := codec.Decode(b)
	t.Key = key
	return t, rest, err
}

// timerHeap orders timers by time, then key group, for a deterministic
// firing order.
type timerHeap []Timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].Timestamp != h[j].Timestamp {
		return h[i].Timestamp < h[j].Timestamp
	}
	if h[i].KeyGroup != h[j].KeyGroup {
		return h[i].KeyGroup < h[j].KeyGroup
	}
	return keyText(h[i].Key) < keyText(h[j].Key)
}

// keyText is fmt.Sprint(k) without formatting a string key (the common
// case: SQL operators key by strings), which made ties at one timestamp
// — every key's window ending at once — dominate the heap's cost.
func keyText(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	return fmt.Sprint(k)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(Timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}
