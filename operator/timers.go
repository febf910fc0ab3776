package operator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// TimeDomain tells whether a timer follows event time or processing time.
type TimeDomain uint8

const (
	// EventTime timers fire when the watermark passes their time.
	EventTime TimeDomain = iota
	// ProcessingTime timers fire when the wall clock passes their time.
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

// timerID is a timer within its bucket (one domain and time).
type timerID struct {
	key any
	ns  string
}

// Triggerable is called when a timer fires, with the timer's key already set
// as the current key of the keyed backend.
type Triggerable interface {
	OnTimer(t Timer) error
}

// TimerService keeps a keyed operator's timers. Timers are state: they are
// snapshotted with the operator and restored by key group. When the keyed
// backend keeps timer queues (state.TimerQueues: the Pebble backend), the
// timers live there, off the Go heap; otherwise on a heap of the service.
// Either way they fire in the same order (see timerqueue.go).
type TimerService struct {
	keyed     state.KeyedBackend
	keyCodec  state.Codec[any]
	maxPar    int
	target    Triggerable
	queues    [2]timerQueue // by domain, made on first use
	watermark event.Timestamp
	// pts fires the processing-time timers (see UseProcessingTime); wake
	// is the callback registered there for the earliest of them.
	pts  *ProcessingTimeService
	wake *ProcessingTimer
}

// NewTimerService returns an empty timer service for a keyed operator.
func NewTimerService(keyed state.KeyedBackend, keyCodec state.Codec[any], maxParallelism int) *TimerService {
	return &TimerService{keyed: keyed, keyCodec: keyCodec, maxPar: maxParallelism, watermark: event.MinWatermark}
}

// queueNames are the names of the domains' queues in a keyed backend.
var queueNames = [2]string{EventTime: "_timer_state/event_timers", ProcessingTime: "_timer_state/processing_timers"}

// queue returns the queue of domain, making it on first use: not before,
// so that the keyed backend is restored before its timer queues exist.
func (s *TimerService) queue(domain TimeDomain) timerQueue {
	if q := s.queues[domain]; q != nil {
		return q
	}
	if tq, ok := s.keyed.(state.TimerQueues); ok {
		q, err := tq.TimerQueue(queueNames[domain])
		if err != nil {
			panic(fmt.Errorf("operator: timer queue: %w", err))
		}
		s.queues[domain] = &storeQueue{q: q, domain: domain, codec: s.keyCodec}
	} else {
		s.queues[domain] = newHeapQueue(s.keyCodec)
	}
	return s.queues[domain]
}

// SetTriggerable names the operator whose OnTimer fires.
func (s *TimerService) SetTriggerable(t Triggerable) { s.target = t }

// CurrentWatermark is the last watermark the service advanced to.
func (s *TimerService) CurrentWatermark() event.Timestamp { return s.watermark }

// Register adds a timer for the current key; registering an existing one is a no-op.
func (s *TimerService) Register(domain TimeDomain, ts event.Timestamp, namespace string) {
	key := s.keyed.CurrentKey()
	t := Timer{Domain: domain, Timestamp: ts, Key: key, KeyGroup: keygroup.ForKey(key, s.maxPar), Namespace: namespace}
	if s.queue(domain).add(t) {
		s.notifyProcessing(domain)
	}
}

// Delete removes a timer of the current key if it is registered.
func (s *TimerService) Delete(domain TimeDomain, ts event.Timestamp, namespace string) {
	key := s.keyed.CurrentKey()
	t := Timer{Domain: domain, Timestamp: ts, Key: key, KeyGroup: keygroup.ForKey(key, s.maxPar), Namespace: namespace}
	if s.queue(domain).remove(t) {
		s.notifyProcessing(domain)
	}
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
	ts, ok := s.queue(ProcessingTime).nextTime()
	if !ok {
		return event.MaxWatermark
	}
	return ts
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
	q := s.queue(domain)
	for {
		if ts, ok := q.nextTime(); !ok || ts > limit {
			return nil
		}
		t, _ := q.peek()
		q.pop(t)
		s.keyed.SetCurrentKey(t.Key, t.KeyGroup)
		if s.target == nil {
			return errors.New("operator: timer fired but no Triggerable is set")
		}
		if err := s.target.OnTimer(t); err != nil {
			return err
		}
	}
}

// Len is the number of registered timers in both domains.
func (s *TimerService) Len() int { return s.queue(EventTime).len() + s.queue(ProcessingTime).len() }

// Snapshot captures every timer now; Write encodes them later.
func (s *TimerService) Snapshot() state.Snapshot {
	return timerSnapshot{domains: [2]capturedQueue{s.queue(EventTime).snapshot(), s.queue(ProcessingTime).snapshot()},
		codec: s.keyCodec, count: s.Len()}
}

type timerSnapshot struct {
	domains [2]capturedQueue
	codec   state.Codec[any]
	count   int // the timers captured, to size the encoding
}

// Write encodes the timers: their count, then each (the same format
// whatever queue held them, and whatever a heap queue's bucket kept
// encoded from the last snapshot). The buffer is sized from the kept
// encodings, the first timer encoded and the count, with room for the
// count in front: a window operator's millions of timers are not copied
// over and over as the buffer grows (a tenth of Nexmark q5's CPU at 1 s
// checkpoints was the timers' encoding).
func (ts timerSnapshot) Write() ([]byte, error) {
	const room = binary.MaxVarintLen64
	kept, keptCount := 0, 0
	for _, d := range ts.domains {
		for _, p := range d.pieces {
			kept += p.enc.size()
			keptCount += p.enc.count
		}
	}
	w := timerWriter{ts: ts, body: make([]byte, room, room+kept+64), rest: ts.count - keptCount}
	for _, d := range ts.domains {
		for _, p := range d.pieces {
			w.piece(p)
		}
		if d.each != nil {
			if err := d.each(w.add); err != nil {
				return nil, err
			}
		}
	}
	head := binary.AppendUvarint(make([]byte, 0, room), uint64(w.n))
	start := room - len(head)
	copy(w.body[start:], head)
	return w.body[start:], nil
}

// timerWriter accumulates a timer snapshot's encoding.
type timerWriter struct {
	ts      timerSnapshot
	body    []byte
	n       int // timers written
	encoded int // timers encoded (not copied from a kept encoding)
	rest    int // about how many timers are to encode, to size body
}

// piece writes a heap queue's piece: its kept encoding copied, its other
// timers encoded, and that encoding left for the bucket if it wants it.
func (w *timerWriter) piece(p timerPiece) {
	for _, s := range p.enc.segs {
		w.body = append(w.body, s...)
	}
	w.n += p.enc.count
	start := len(w.body)
	for _, t := range p.ts {
		w.add(t)
	}
	if p.back != nil {
		p.back.finish(w.body[start:], len(p.ts))
	}
}

// add encodes t, growing the buffer once, after the first, for the rest.
func (w *timerWriter) add(t Timer) {
	before := len(w.body)
	w.body = w.ts.append(w.body, t)
	w.n++
	if w.encoded++; w.encoded == 1 && w.rest > 1 {
		per := len(w.body) - before
		w.body = slices.Grow(w.body, (w.rest-1)*(per+per/4))
	}
}

func (ts timerSnapshot) append(buf []byte, t Timer) []byte {
	buf = append(buf, byte(t.Domain))
	buf = binary.AppendVarint(buf, t.Timestamp)
	buf = binary.AppendUvarint(buf, uint64(t.KeyGroup))
	buf = binary.AppendUvarint(buf, uint64(len(t.Namespace)))
	buf = append(buf, t.Namespace...)
	return ts.codec.Encode(buf, t.Key)
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
			if t.Domain > ProcessingTime {
				return fmt.Errorf("%w: timer of unknown time domain %d", errTimerCorrupt, t.Domain)
			}
			s.queue(t.Domain).add(t)
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
