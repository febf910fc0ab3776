package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/rest/api"
)

// Tail limits: a client asks for up to maxTailRate rows a second, and
// each stream buffers tailBuffer samples; anything beyond is dropped and
// counted, never waited for.
const (
	defaultTailRate = 10
	maxTailRate     = 1000
	tailBuffer      = 256
	tailRefill      = 100 * time.Millisecond
	tailStatsEvery  = 10 // refills: a stats event a second
)

// tail is GET /jobs/:jobid/vertices/:vertexid/tail?rate=R&limit=N: the
// rows the vertex emits, sampled at most R a second (default 10, at most
// 1,000), as server-sent events, until the client goes away, N rows were
// sent or the job ends; a stats event every second and last.
func (s *Server) tail(w http.ResponseWriter, r *http.Request) {
	rate, ok := positiveParam(w, r, "rate", defaultTailRate)
	if !ok {
		return
	}
	limit, ok := positiveParam(w, r, "limit", 1<<62)
	if !ok {
		return
	}
	if rate > maxTailRate {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("rate %d: at most %d rows a second", rate, maxTailRate))
		return
	}
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	vid := r.PathValue("vertexid")
	if _, err := j.TailGroups(vid); err != nil {
		writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	t := &tailStream{w: w, rc: http.NewResponseController(w), j: j, vid: vid, rate: rate, limit: int64(limit),
		rd: metrics.NewTailReader(tailBuffer), closed: s.ctx.Done()}
	defer t.detach()
	t.run(r)
}

// tailStream is one client's tail: its reader, attached to the subtasks
// of the vertex's current attempt (again after a restart).
type tailStream struct {
	w           http.ResponseWriter
	rc          *http.ResponseController
	j           *jobmanager.Job
	vid         string
	rate        int
	limit, sent int64
	rd          *metrics.TailReader
	closed      <-chan struct{} // the server's Close
	attached    []*metrics.Subtask
}

func (t *tailStream) run(r *http.Request) {
	tick := time.NewTicker(tailRefill)
	defer tick.Stop()
	t.reattach()
	t.refill()
	if !t.send(api.TailEvent{Stats: t.stats("")}) {
		return
	}
	for n := 1; ; n++ {
		select {
		case <-r.Context().Done():
			return
		case <-t.closed:
			return
		case smp := <-t.rd.C:
			if !t.sendRow(smp) {
				return
			}
			if t.sent >= t.limit {
				t.send(api.TailEvent{Stats: t.stats("limit")})
				return
			}
		case <-tick.C:
			if api.Terminal(t.j.State()) {
				t.drain()
				t.send(api.TailEvent{Stats: t.stats("the job is " + t.j.State())})
				return
			}
			t.reattach()
			t.refill()
			if n%tailStatsEvery == 0 && !t.send(api.TailEvent{Stats: t.stats("")}) {
				return
			}
		}
	}
}

// reattach attaches the reader to the vertex's subtasks of the current
// attempt, detaching it from those of an attempt that was replaced.
func (t *tailStream) reattach() {
	gs, _ := t.j.TailGroups(t.vid) // the vertex was found before
	if slices.Equal(gs, t.attached) {
		return
	}
	t.detach()
	for _, g := range gs {
		g.Tail.Attach(t.rd)
	}
	t.attached = gs
}

func (t *tailStream) detach() {
	for _, g := range t.attached {
		g.Tail.Detach(t.rd)
	}
	t.attached = nil
}

// refill lets the subtasks take rate × tailRefill samples (at least one)
// until the next refill.
func (t *tailStream) refill() {
	t.rd.Refill(max(1, int64(t.rate)*int64(tailRefill)/int64(time.Second)))
}

// drain sends the samples buffered when the job ended.
func (t *tailStream) drain() {
	for t.sent < t.limit {
		select {
		case smp := <-t.rd.C:
			if !t.sendRow(smp) {
				return
			}
		default:
			return
		}
	}
}

func (t *tailStream) sendRow(smp metrics.Sample) bool {
	t.sent++
	return t.send(api.TailEvent{Row: &api.TailRow{Subtask: smp.Subtask, Kind: smp.Kind, Fields: smp.Fields, Timestamp: smp.Timestamp}})
}

func (t *tailStream) stats(ended string) *api.TailStats {
	return &api.TailStats{Seen: t.rd.Seen(), Sampled: t.sent, Dropped: t.rd.Dropped(), Rate: t.rate, Ended: ended}
}

// send writes one server-sent event and flushes it; false when the
// client went away.
func (t *tailStream) send(e api.TailEvent) bool {
	b, err := json.Marshal(e)
	if err != nil {
		return false
	}
	if _, err := fmt.Fprintf(t.w, "data: %s\n\n", b); err != nil {
		return false
	}
	return t.rc.Flush() == nil
}
