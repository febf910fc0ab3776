package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weirstream/weir/examples/billing/pipeline"
	"github.com/weirstream/weir/rest/api"
)

// The web dashboard in a real browser (Debian's headless Chromium driven
// by chromedp), on the billing job running in a JobManager on the real
// Kafka and MariaDB: the job graph, the checkpoint timeline, the
// watermarks and the Kafka lag show the numbers the REST API reports; "Stop with savepoint"
// fails without the token, then, with the token typed into the page,
// stops the job with a savepoint; the first half of the bills is in
// MariaDB exactly, and weir run --restore of that savepoint reads the
// second half to totals equal to the ground truth (duplicates across the
// halves dropped by the restored state), no XA transaction left behind.
// Screenshots go to $WEIR_ARTIFACTS/dashboard (else a temporary directory,
// logged).
func TestDashboardStopWithSavepoint(t *testing.T) {
	browser := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := newBillingRun(t, 4000, "mysql")
	half := len(r.events) / 2
	if err := ProduceBills(ctx, r.brokers, r.dlq, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := ProduceBills(ctx, r.brokers, r.topic, 3, r.events[:half]); err != nil {
		t.Fatal(err)
	}
	first := *r
	first.truth = filepath.Join(r.dir, "truth-first-half.csv")
	first.flags.truth = first.truth
	if err := os.WriteFile(first.truth, []byte(pipeline.FormatTruth(pipeline.Truth(r.events[:half]))), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	lap := func(what string) { t.Logf("%5.1fs %s", time.Since(start).Seconds(), what) }
	const token = "dashboard-test-token"
	jm := startJobManager(t, filepath.Join(r.dir, "jm"), "-D", "weir.rest.auth-token="+token)
	id := jm.submit(unbounded(t, r.script()), "-D", "execution.checkpointing.interval=200ms", "--token", token)
	// With the first half read and committed, the record counts and the
	// watermarks stand still: the page must show them exactly.
	waitForTotals(t, &first, func() string { return "JobManager log:\n" + jm.stderr.String() })
	lap("the first half read and committed")

	d := openDashboard(t, ctx, browser, jm.url)
	lap("browser open")
	d.checkJobs(id)
	d.checkGraph(id, half)
	d.checkCheckpoints(id)
	d.checkWatermarks(id)
	d.checkLag(id, r.topic, 3)
	lap("jobs, graph, checkpoints, watermarks and lag checked")
	location := d.stopWithSavepoint(id, token, filepath.Join(r.dir, "stopped"))
	hasMetadata(t, location)
	jm.waitState(id, api.StateFinished)
	d.waitText("#job-state", api.StateFinished)
	d.screenshot("5-stopped")
	lap("stopped with a savepoint")
	var verdict bytes.Buffer
	if err := verifyTotals(&verdict, first.flags); err != nil {
		t.Fatalf("after the stop: %v\n%s", err, verdict.String())
	}

	if err := ProduceBills(ctx, r.brokers, r.topic, 3, r.events[half:]); err != nil {
		t.Fatal(err)
	}
	restoreToTruth(t, ctx, r, location)
	lap("restored to the exact totals")
}

// chromium finds Debian's chromium (scripts/services.sh up installs it):
// missing, the test fails under CI and is skipped elsewhere.
func chromium(t *testing.T) string {
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed: scripts/services.sh up installs it (apt-get install chromium)")
		}
		t.Skip("chromium is not installed (scripts/services.sh up installs it)")
	}
	return p
}

// restoreToTruth runs weir run --restore savepoint until r's table holds
// the whole ground truth, stops it on SIGTERM with a savepoint (which
// commits) and verifies the table exactly. The savepoint's source splits
// read on without end (as in Flink, a split's stopping offset is its
// state), hence the SIGTERM.
func restoreToTruth(t *testing.T, ctx context.Context, r *billingRun, savepoint string) {
	self, _ := os.Executable()
	var runLog bytes.Buffer
	run := exec.CommandContext(ctx, self, "run", unbounded(t, r.script()), "-q", "--restore", savepoint,
		"--savepoint-on-stop", filepath.Join(r.dir, "final"), "-D", "execution.checkpointing.interval=200ms")
	run.Stdout, run.Stderr = &runLog, &runLog
	_ = os.Remove(filepath.Join(r.dir, "checkpoints", restAddressFile))
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(r.dir, "checkpoints", restAddressFile)) // its SIGTERM handler is set
	waitForTotals(t, r, func() string { return "weir run log:\n" + runLog.String() })
	if err := run.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err == nil || run.ProcessState.ExitCode() != 143 {
		t.Fatalf("weir run --restore %s on SIGTERM: %v, want exit status 143\n%s", savepoint, err, runLog.String())
	}
	var verdict bytes.Buffer
	if err := verifyTotals(&verdict, r.flags); err != nil {
		t.Fatalf("after the restore: %v\n%s", err, verdict.String())
	}
}

// dashboard is a headless Chromium tab on the JobManager's dashboard.
type dashboard struct {
	t         *testing.T
	ctx       context.Context
	base      string
	artifacts string
	mu        struct {
		sync.Mutex
		errors []string // exceptions thrown by the page's scripts
	}
}

func openDashboard(t *testing.T, ctx context.Context, browser, base string) *dashboard {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 1800))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelTab := chromedp.NewContext(actx)
	d := &dashboard{t: t, ctx: bctx, base: base, artifacts: artifactsDir(t)}
	d.run(chromedp.Navigate(base + "/"))
	// Console messages from the page: an uncaught exception or a script,
	// style or request the Content-Security-Policy refused fails the test
	// (401s of the unauthenticated stop are expected and ignored).
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range chromedp.Console(bctx) {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				d.mu.Lock()
				d.mu.errors = append(d.mu.errors, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
				d.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		<-done
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, e := range d.mu.errors {
			t.Errorf("the dashboard's console: %s", e)
		}
	})
	return d
}

// artifactsDir is where screenshots go: $WEIR_ARTIFACTS/dashboard, else a
// temporary directory (removed after the test).
func artifactsDir(t *testing.T) string {
	dir := t.TempDir()
	if a := os.Getenv("WEIR_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "dashboard")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("dashboard screenshots in %s", dir)
	return dir
}

func (d *dashboard) run(steps ...chromedp.Action[chromedp.Void]) {
	d.t.Helper()
	if err := chromedp.Do(d.ctx, steps...); err != nil {
		d.t.Fatalf("browser: %v", err)
	}
}

// show opens a page of the dashboard by its hash route and waits for sel.
func (d *dashboard) show(route, sel string) {
	d.t.Helper()
	// A hash route is the page's own navigation: no reload.
	var set string
	eval(d, fmt.Sprintf("location.hash = %q", "#"+route), &set)
	d.run(chromedp.WaitVisible(chromedp.CSS(sel)))
}

func (d *dashboard) screenshot(name string) {
	d.t.Helper()
	png, err := chromedp.Run(d.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		d.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(d.artifacts, name+".png"), png, 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// eval runs a JavaScript expression in the page and decodes its value
// into out.
func eval[T any](d *dashboard, js string, out *T) {
	d.t.Helper()
	v, err := chromedp.Run(d.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		d.t.Fatalf("browser: %s: %v", js, err)
	}
	*out = v
}

// agree polls until the page shows what the REST API says (the page
// refreshes every few seconds), failing with the last difference after
// 30 s.
func (d *dashboard) agree(what string, check func() string) {
	d.t.Helper()
	diff := ""
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if diff = check(); diff == "" {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: the dashboard never agreed with the REST API: %s", what, diff)
		}
	}
}

func (d *dashboard) waitText(sel, want string) {
	d.t.Helper()
	d.agree(sel, func() string {
		var got string
		eval(d, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel), &got)
		if got != want {
			return fmt.Sprintf("%s shows %q, want %q", sel, got, want)
		}
		return ""
	})
}

// job is GET /v1/jobs/:id.
func (d *dashboard) job(id string) api.JobDetails {
	d.t.Helper()
	var job api.JobDetails
	if code, body := getJSON(d.t, d.base+"/v1/jobs/"+id, &job); code != http.StatusOK {
		d.t.Fatalf("GET /v1/jobs/%s: %d %s", id, code, body)
	}
	return job
}

// checkJobs: the overview lists the job, RUNNING, linked to its page.
func (d *dashboard) checkJobs(id string) {
	d.show("/", fmt.Sprintf("#jobs-table tr[data-job='%s']", id))
	var row []string
	eval(d, fmt.Sprintf(`(() => { const r = document.querySelector("#jobs-table tr[data-job='%s']");
		return [r.querySelector('a').textContent, r.querySelector('a').getAttribute('href'), r.querySelector('.state').textContent]; })()`, id), &row)
	if want := []string{"billing", "#/job/" + id + "/graph", api.StateRunning}; !slices.Equal(row, want) {
		d.t.Fatalf("jobs overview row %v, want %v", row, want)
	}
	d.screenshot("0-jobs")
}

// checkGraph: one card per vertex with the records in and out the REST
// API reports, the source's records out are the bills it read, and the
// busy and back-pressured ratios are "n/a" exactly when the REST API has
// no sample.
func (d *dashboard) checkGraph(id string, bills int) {
	d.show("/job/"+id+"/graph", ".vertex")
	type card struct{ ID, In, Out, Busy, Back string }
	var cards []card
	d.agree("job graph", func() string {
		eval(d, `[...document.querySelectorAll('.vertex')].map(v => ({ID: v.dataset.vertex,
			In: v.querySelector('.rec-in').dataset.value, Out: v.querySelector('.rec-out').dataset.value,
			Busy: v.querySelector('.busy').textContent, Back: v.querySelector('.backpressured').textContent}))`, &cards)
		job := d.job(id)
		var want []card
		for _, v := range job.Vertices {
			var bp api.BackPressure
			if code, body := getJSON(d.t, d.base+"/v1/jobs/"+id+"/vertices/"+v.ID+"/backpressure", &bp); code != http.StatusOK {
				d.t.Fatalf("back-pressure of %s: %d %s", v.Name, code, body)
			}
			busy, back := "n/a", "n/a"
			if bp.Status == "ok" && len(bp.Subtasks) > 0 {
				busy, back = "measured", "measured" // live ratios: checked for their form below
			}
			want = append(want, card{v.ID, fmt.Sprint(v.Metrics.ReadRecords), fmt.Sprint(v.Metrics.WriteRecords), busy, back})
		}
		for i := range cards {
			for _, r := range []*string{&cards[i].Busy, &cards[i].Back} {
				if percent.MatchString(*r) {
					*r = "measured"
				}
			}
		}
		if !sameSet(cards, want) {
			return fmt.Sprintf("cards %+v, REST %+v", cards, want)
		}
		for _, n := range job.Plan.Nodes {
			for _, c := range cards {
				if len(n.Inputs) == 0 && c.ID == n.ID && c.Out != fmt.Sprint(bills) {
					return fmt.Sprintf("source %s wrote %s records, want the %d bills", n.ID, c.Out, bills)
				}
			}
		}
		return ""
	})
	d.screenshot("1-graph")
}

var percent = regexp.MustCompile(`^\d{1,3} %$`)

func sameSet[T any](a, b []T) bool {
	key := func(xs []T) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			m[fmt.Sprintf("%+v", x)] = true
		}
		return m
	}
	return len(a) == len(b) && reflect.DeepEqual(key(a), key(b))
}

// checkCheckpoints: the selected checkpoint's slowest-subtasks table and
// timeline chart hold that checkpoint's REST timeline (…/slowest),
// phase by phase.
func (d *dashboard) checkCheckpoints(id string) {
	d.show("/job/"+id+"/checkpoints", "#slowest-table tbody tr")
	var page struct {
		Checkpoint int64
		Rows       [][]string // vertex id, subtask, barrier, aligned, sync, async, ack, completed
		Labels     []string
		Segments   [][]float64 // per dataset of the chart, per bar
	}
	eval(d, `(() => { const t = document.querySelector('#slowest-table');
		const ch = Chart.getChart('timeline-chart');
		return {Checkpoint: Number(t.dataset.checkpoint),
		Rows: [...t.querySelectorAll('tbody tr')].map(r => [r.dataset.vertex, r.dataset.subtask,
			...[...r.querySelectorAll('td.num')].slice(1, 7).map(c => c.dataset.value)]),
		Labels: ch.data.labels, Segments: ch.data.datasets.map(s => s.data)}; })()`, &page)
	var tl api.CheckpointTimeline
	code, body := getJSON(d.t, fmt.Sprintf("%s/v1/jobs/%s/checkpoints/details/%d/slowest?n=20", d.base, id, page.Checkpoint), &tl)
	if code != http.StatusOK {
		d.t.Fatalf("slowest of checkpoint %d: %d %s", page.Checkpoint, code, body)
	}
	if len(tl.Subtasks) == 0 || len(page.Rows) != len(tl.Subtasks) || len(page.Labels) != len(tl.Subtasks) || len(page.Segments) != 5 {
		d.t.Fatalf("checkpoint %d: the page has %d rows and %d bars, REST %d subtasks", page.Checkpoint, len(page.Rows), len(page.Labels), len(tl.Subtasks))
	}
	for i, s := range tl.Subtasks {
		want := []string{s.VertexID, fmt.Sprint(s.Subtask), fmt.Sprint(s.BarrierIn), fmt.Sprint(s.Aligned), fmt.Sprint(s.SyncDone),
			fmt.Sprint(s.AsyncDone), fmt.Sprint(s.Acknowledged), fmt.Sprint(s.Completed)}
		if !reflect.DeepEqual(page.Rows[i], want) {
			d.t.Errorf("checkpoint %d row %d: page %v, REST %v", page.Checkpoint, i, page.Rows[i], want)
		}
		segs := []int64{s.BarrierIn - s.Trigger, s.Aligned - s.BarrierIn, s.SyncDone - s.Aligned, s.AsyncDone - s.SyncDone, s.Completed - s.Acknowledged}
		for k, w := range segs {
			if page.Segments[k][i] != float64(w) {
				d.t.Errorf("checkpoint %d, bar %d, segment %d: chart %v, REST %d", page.Checkpoint, i, k, page.Segments[k][i], w)
			}
		}
		if want := fmt.Sprintf("%s #%d", s.VertexName, s.Subtask); page.Labels[i] != want {
			d.t.Errorf("bar %d is labelled %q, want %q", i, page.Labels[i], want)
		}
	}
	d.checkPhases(id, page.Checkpoint)
	d.screenshot("2-checkpoints")
}

// checkPhases: the per-vertex table of checkpoint cid holds REST's
// …/phases: acknowledged counts, the slowest subtask's end to end, state
// size.
func (d *dashboard) checkPhases(id string, cid int64) {
	var got [][]string
	eval(d, `[...document.querySelectorAll('#phases-table tbody tr')].map(r => [r.dataset.vertex, r.children[1].textContent,
		r.children[6].dataset.value, r.children[7].dataset.value])`, &got)
	var ph api.CheckpointPhases
	if code, body := getJSON(d.t, fmt.Sprintf("%s/v1/jobs/%s/checkpoints/details/%d/phases", d.base, id, cid), &ph); code != http.StatusOK {
		d.t.Fatalf("phases of checkpoint %d: %d %s", cid, code, body)
	}
	var want [][]string
	for _, v := range ph.Vertices {
		want = append(want, []string{v.VertexID, fmt.Sprintf("%d / %d", v.NumAcknowledgedSubtasks, v.NumSubtasks),
			fmt.Sprint(v.EndToEndDuration.Max), fmt.Sprint(v.StateSize)})
	}
	if !reflect.DeepEqual(got, want) || len(want) == 0 {
		d.t.Errorf("checkpoint %d per vertex: page %v, REST %v", cid, got, want)
	}
}

// checkWatermarks: every subtask's watermark as REST reports it (the
// page's one page holds them all at this parallelism), the summary's
// lowest and highest, and the sources have one (the bills carry event
// times).
func (d *dashboard) checkWatermarks(id string) {
	d.show("/job/"+id+"/watermarks", ".wm-table")
	job := d.job(id)
	d.agree("watermarks", func() string {
		var got map[string][]string
		eval(d, `Object.fromEntries([...document.querySelectorAll('.wm-vertex')].map(s => [s.dataset.vertex,
			[...s.querySelectorAll('.wm-table tbody tr')].map(r => r.dataset.subtask + '=' + r.querySelectorAll('td')[1].dataset.value)
			.concat(['min=' + s.querySelector('.wm-summary').dataset.min, 'max=' + s.querySelector('.wm-summary').dataset.max])]))`, &got)
		want := map[string][]string{}
		for _, v := range job.Vertices {
			var ms []api.Metric
			if code, body := getJSON(d.t, d.base+"/v1/jobs/"+id+"/vertices/"+v.ID+"/watermarks", &ms); code != http.StatusOK {
				d.t.Fatalf("watermarks of %s: %d %s", v.Name, code, body)
			}
			for _, m := range ms {
				want[v.ID] = append(want[v.ID], strings.TrimSuffix(m.ID, ".currentInputWatermark")+"="+m.Value)
			}
			lo, hi := watermarkRange(ms)
			want[v.ID] = append(want[v.ID], fmt.Sprintf("min=%d", lo), fmt.Sprintf("max=%d", hi))
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("page %v, REST %v", got, want)
		}
		for _, v := range want {
			for _, w := range v {
				if !strings.HasSuffix(w, "=-9223372036854775808") {
					return ""
				}
			}
		}
		return fmt.Sprintf("no subtask has a watermark yet: %v", want)
	})
	d.screenshot("3-watermarks")
}

// watermarkRange is the lowest and highest of the watermarks that are
// set (0, 0 when none is), as /watermarks/summary reports them.
func watermarkRange(ms []api.Metric) (lo, hi int64) {
	first := true
	for _, m := range ms {
		wm, err := strconv.ParseInt(m.Value, 10, 64)
		if err != nil || wm == math.MinInt64 {
			continue
		}
		if first {
			lo, hi, first = wm, wm, false
		}
		lo, hi = min(lo, wm), max(hi, wm)
	}
	return lo, hi
}

var lagMetric = regexp.MustCompile(`^\d+\..*\.KafkaSourceReader\.topic\.(.+)\.partition\.(\d+)\.records-lag$`)

// checkLag: each partition of the bills topic with the records-lag the
// REST API's vertex metrics report: 0 once the first half is read.
func (d *dashboard) checkLag(id, topic string, partitions int) {
	d.show("/job/"+id+"/lag", "#lag-table")
	job := d.job(id)
	d.agree("Kafka lag", func() string {
		var got []string
		eval(d, `[...document.querySelectorAll('#lag-table tbody tr')].map(r =>
			r.dataset.topic + '/' + r.dataset.partition + '=' + r.querySelector('td:last-child').dataset.value)`, &got)
		var want []string
		for _, v := range job.Vertices {
			var ids, vals []api.Metric
			getJSON(d.t, d.base+"/v1/jobs/"+id+"/vertices/"+v.ID+"/metrics", &ids)
			var lag []string
			for _, m := range ids {
				if lagMetric.MatchString(m.ID) {
					lag = append(lag, m.ID)
				}
			}
			if len(lag) == 0 {
				continue
			}
			getJSON(d.t, d.base+"/v1/jobs/"+id+"/vertices/"+v.ID+"/metrics?get="+url.QueryEscape(strings.Join(lag, ",")), &vals)
			for _, m := range vals {
				g := lagMetric.FindStringSubmatch(m.ID)
				want = append(want, g[1]+"/"+g[2]+"="+m.Value)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Sprintf("page %v, REST %v", got, want)
		}
		var caughtUp []string
		for p := range partitions {
			caughtUp = append(caughtUp, fmt.Sprintf("%s/%d=0", topic, p))
		}
		if !slices.Equal(want, caughtUp) {
			return fmt.Sprintf("lag %v, want %v", want, caughtUp)
		}
		return ""
	})
	d.screenshot("4-lag")
}

// stopWithSavepoint clicks "Stop with savepoint" without the token (the
// page says the token is needed), then types the token and the target
// directory and clicks again; it returns the savepoint's path the page
// shows.
func (d *dashboard) stopWithSavepoint(id, token, dir string) string {
	d.show("/job/"+id+"/graph", "#stop")
	d.run(chromedp.Click(chromedp.CSS("#stop")), chromedp.WaitVisible(chromedp.CSS("#op-status .error")))
	var msg string
	eval(d, `document.querySelector('#op-status').textContent`, &msg)
	if !strings.HasPrefix(msg, "401: ") || !strings.Contains(msg, "Token field") {
		d.t.Fatalf("stop without the token: the page says %q, want a 401 that asks for the token", msg)
	}
	d.run(chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.SendKeys(chromedp.CSS("#savepoint-dir"), dir),
		chromedp.Click(chromedp.CSS("#stop")), chromedp.WaitVisible(chromedp.CSS("#op-status [data-location]")))
	var location, href string
	eval(d, `document.querySelector('#op-status [data-location]').dataset.location`, &location)
	eval(d, `location.href`, &href)
	if strings.Contains(href, token) {
		d.t.Errorf("the token is in the page's URL %s", href)
	}
	if filepath.Dir(location) != dir {
		d.t.Fatalf("the page shows savepoint %q, want one under %s", location, dir)
	}
	return location
}

func getJSON(t *testing.T, url string, v any) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
	}
	return resp.StatusCode, body
}
