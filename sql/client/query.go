package client

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/parser"
)

// query runs a SELECT in this process and shows its result live in the
// session's result mode until it ends or Ctrl-C cancels it; either way
// its job is cancelled and waited for before the prompt returns.
func (sh *Shell) query(ctx context.Context, q *parser.Query) error {
	mode := strings.ToLower(sh.sess.Settings[keyResultMode])
	if mode == "" {
		mode = modeTable // Flink's default
	}
	sink := newCollectSink()
	jg, opts, cols, err := sh.sess.Collect(q, "collect", sink)
	if err != nil {
		return err
	}
	loc, err := sh.sess.Location()
	if err != nil {
		return err
	}
	if mode != modeTableau && sh.opts.TermSize == nil {
		return fmt.Errorf("without a terminal, a query's result is printed in tableau mode only; "+
			"hint: add SET '%s' = 'tableau'; before it", keyResultMode)
	}
	opts.Logger = sh.opts.Logger
	sh.drainInterrupts()
	job, err := runtime.Start(ctx, jg, opts)
	if err != nil {
		return err
	}
	r := &run{sh: sh, sink: sink, job: job}
	var st status
	if mode == modeTableau {
		st = r.tableau(newTableau(cols, loc))
	} else {
		st = r.frames(newFrameView(mode, cols, loc))
	}
	close(sink.stop)
	job.Cancel()
	_, err = job.Wait()
	if st == cancelled {
		return nil
	}
	return err
}

// drainInterrupts drops a Ctrl-C pressed while no query ran, so it does
// not cancel the next one.
func (sh *Shell) drainInterrupts() {
	for {
		select {
		case <-sh.opts.Interrupt:
		default:
			return
		}
	}
}

// run is one SELECT being shown.
type run struct {
	sh   *Shell
	sink *collectSink
	job  *runtime.JobClient
}

// next waits for the next row; ok is false when the result ended (st
// says how).
func (r *run) next(tick <-chan time.Time) (row event.Row, st status, ok, ticked bool) {
	select {
	case row = <-r.sink.rows:
		return row, running, true, false
	case <-r.job.Done():
		// Every row was handed over before the job ended: its writers
		// returned. One still in the buffer is read first.
		select {
		case row = <-r.sink.rows:
			return row, running, true, false
		default:
			return row, finished, false, false
		}
	case <-r.sh.opts.Interrupt:
		return row, cancelled, false, false
	case <-tick:
		return row, running, false, true
	}
}

// tableau prints rows as they arrive.
func (r *run) tableau(t *tableau) status {
	out := r.sh.opts.Out
	io.WriteString(out, t.start())
	for {
		row, st, ok, _ := r.next(nil)
		if !ok {
			if st == cancelled && r.sh.opts.TermSize != nil {
				io.WriteString(out, "\r") // over the ^C the terminal echoed
			}
			io.WriteString(out, t.end(st))
			fmt.Fprintln(out)
			return st
		}
		io.WriteString(out, t.add(row))
	}
}

// frames shows a live view drawn again in place at most every Refresh,
// and leaves its last frame on the screen.
func (r *run) frames(v *frameView) status {
	d := &drawer{w: r.sh.opts.Out, size: r.sh.opts.TermSize}
	tick := time.NewTicker(r.sh.opts.Refresh)
	defer tick.Stop()
	d.draw(v, running)
	dirty := false
	for {
		row, st, ok, ticked := r.next(tick.C)
		switch {
		case ticked:
			if dirty {
				d.draw(v, running)
				dirty = false
			}
		case !ok:
			d.draw(v, st)
			fmt.Fprintln(r.sh.opts.Out)
			return st
		default:
			v.add(row)
			dirty = true
		}
	}
}

// drawer draws frames over the previous one: the cursor goes up to the
// frame's first line (ANSI CPL), the screen below is cleared (ED) and the
// new frame written, each line cut to the terminal's width so that the
// count of lines to go up stays true.
type drawer struct {
	w     io.Writer
	size  func() (int, int)
	lines int
}

func (d *drawer) draw(v *frameView, st status) {
	width, height := d.size()
	var b strings.Builder
	if d.lines > 0 {
		fmt.Fprintf(&b, "\033[%dF\033[J", d.lines)
	}
	frame := v.frame(st, height-1)
	for _, l := range frame {
		if width > 0 && utf8.RuneCountInString(l) > width {
			l = string([]rune(l)[:width])
		}
		b.WriteString(l + "\n")
	}
	d.lines = len(frame)
	io.WriteString(d.w, b.String())
}
