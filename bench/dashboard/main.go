// Command dashboard measures the REST API and the web dashboard on a job
// with many subtasks (Flink's metrics tab breaks at 1,600: FLINK-35902).
// It starts a JobManager in this process, runs a SQL job of one vertex at
// -parallelism (datagen → blackhole, chained) with a checkpoint every
// -interval, waits for a completed checkpoint, then reports, per REST
// endpoint the dashboard reads, the response size and the median time of
// -repeat requests; and, with headless Chromium (chromedp), how long each
// dashboard page takes from its hash route to its content. It reports;
// it asserts nothing.
//
//	go run ./bench/dashboard -parallelism 5000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/blackhole"
	"github.com/weirstream/weir/connector/datagen"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/rest"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/types"
)

type config struct {
	parallelism, repeat int
	interval, wait      time.Duration
	browser             string
}

func main() {
	var c config
	flag.IntVar(&c.parallelism, "parallelism", 5000, "subtasks of the job's one vertex")
	flag.IntVar(&c.repeat, "repeat", 5, "requests per endpoint (the median is reported)")
	flag.DurationVar(&c.interval, "interval", 5*time.Second, "checkpoint interval")
	flag.DurationVar(&c.wait, "wait", 5*time.Minute, "how long to wait for a completed checkpoint before measuring")
	flag.StringVar(&c.browser, "browser", "chromium", "headless browser for the page timings (\"\": skip them)")
	flag.Parse()
	if err := run(c); err != nil {
		log.Fatal(err)
	}
}

func run(c config) error {
	dir, err := os.MkdirTemp("", "weir-bench-dashboard")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, err := jobmanager.LoadConfig("", []string{"rest.port=0", "weir.jobmanager.dir=" + dir,
		jobmanager.KeySlots + "=" + strconv.Itoa(c.parallelism)})
	if err != nil {
		return err
	}
	m, err := jobmanager.Open(jobmanager.Options{Dir: dir, Config: cfg})
	if err != nil {
		return err
	}
	defer m.Close()
	ep, err := rest.Listen(m, cfg)
	if err != nil {
		return err
	}
	defer ep.Close()
	id, err := startJob(m, c, dir)
	if err != nil {
		return err
	}
	defer func() { _ = m.Cancel(id) }()
	d, cid, err := awaitCheckpoint(ep.URL(), id, c.wait)
	if err != nil {
		return err
	}
	fmt.Printf("job %s: %d vertex, %d subtasks, checkpoint %d\n\n", id, len(d.Vertices), c.parallelism, cid)
	measureREST(ep.URL(), endpoints(id, d.Vertices[0].ID, cid), c.repeat)
	if c.browser == "" {
		return nil
	}
	return measurePages(ep.URL(), id, c.browser)
}

// startJob submits datagen → blackhole at c.parallelism through the Go
// API (SQL has no max parallelism option; the default, 128, is less).
func startJob(m *jobmanager.Manager, c config, dir string) (string, error) {
	env := weir.NewEnvironment().SetParallelism(c.parallelism).SetMaxParallelism(c.parallelism).
		EnableCheckpointing(c.interval, weir.ExactlyOnce, filepath.Join(dir, "ck"))
	gen, err := datagen.FromOptions([]types.Field{{Name: "n", Type: types.Type{Kind: types.BigInt}}},
		map[string]string{"rows-per-second": strconv.Itoa(c.parallelism)})
	if err != nil {
		return "", err
	}
	rows := weir.FromSource[event.Row](env, gen, "gen", weir.WithUID("gen"))
	weir.SinkTo(rows, &blackhole.Sink{}, "out").UID("out")
	jg, err := env.JobGraph("wide")
	if err != nil {
		return "", err
	}
	j, err := m.SubmitGraph(jg, *env.RuntimeOptions())
	if err != nil {
		return "", err
	}
	return j.ID(), nil
}

// awaitCheckpoint waits (at most wait) until the job has completed a
// checkpoint, and returns its details and the checkpoint's id (0 when
// none completed in time: the checkpoint endpoints are then measured on
// checkpoint 1, in progress or not found).
func awaitCheckpoint(base, id string, wait time.Duration) (api.JobDetails, int64, error) {
	cl := &rest.Client{Base: base}
	var d api.JobDetails
	for deadline := time.Now().Add(wait); ; time.Sleep(500 * time.Millisecond) {
		st, err := cl.Checkpoints(context.Background(), id)
		done := err == nil && st.Latest.Completed != nil
		if !done && time.Now().Before(deadline) {
			continue
		}
		if _, _, err := fetch(base+"/v1/jobs/"+id, &d); err != nil {
			return d, 0, err
		}
		if !done {
			log.Printf("job %s completed no checkpoint in %s", id, wait)
			return d, 1, nil
		}
		return d, st.Latest.Completed.ID, nil
	}
}

// endpoints are the REST paths the dashboard reads for a job.
func endpoints(id, vid string, cid int64) []string {
	j := "/v1/jobs/" + id
	v := j + "/vertices/" + vid
	ck := fmt.Sprintf("%s/checkpoints/details/%d", j, cid)
	return []string{"/v1/jobs/overview", j, j + "/checkpoints", ck, ck + "/subtasks/" + vid, ck + "/timeline",
		ck + "/slowest?n=10", v, v + "/backpressure", v + "/watermarks", v + "/metrics",
		v + "/metrics?get=0.numRecordsIn,4999.numRecordsIn", v + "/subtasks/metrics?get=numRecordsIn,busyTimeMsPerSecond",
		j + "/exceptions", j + "?subtasks=all", v + "?offset=0&limit=50", v + "/backpressure?offset=0&limit=50",
		ck + "/subtasks/" + vid + "?offset=0&limit=50", ck + "/timeline?offset=0&limit=50", v + "/watermarks?offset=0&limit=50",
		v + "/metrics?offset=0&limit=50", v + "/subtasks/metrics", v + "/watermarks/summary?n=10", ck + "/phases",
		ck + "/slowest?n=20"}
}

func measureREST(base string, paths []string, repeat int) {
	fmt.Printf("%-110s %12s %10s\n", "REST endpoint", "bytes", "median")
	for _, p := range paths {
		var times []time.Duration
		var size int
		for range repeat {
			start := time.Now()
			n, code, err := fetch(base+p, nil)
			times = append(times, time.Since(start))
			if err != nil || code != http.StatusOK {
				fmt.Printf("%-110s error %d %v\n", p, code, err)
				break
			}
			size = n
		}
		slices.Sort(times)
		fmt.Printf("%-110s %12d %10s\n", p, size, times[len(times)/2].Round(10*time.Microsecond))
	}
}

// fetch GETs url, decoding into v when set, and returns the body's size.
func fetch(url string, v any) (int, int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || v == nil {
		return len(b), resp.StatusCode, err
	}
	return len(b), resp.StatusCode, json.Unmarshal(b, v)
}

// pages are the dashboard's pages of a job: hash route and what shows once
// it rendered.
func pages(id string) [][2]string {
	j := "/job/" + id
	return [][2]string{{"/", "#jobs-table tr[data-job='" + id + "']"}, {j + "/graph", ".vertex"},
		{j + "/checkpoints", "#slowest-table tbody tr"}, {j + "/watermarks", ".wm-table"},
		{j + "/lag", "#no-lag"}, {j + "/exceptions", "#exceptions"}}
}

func measurePages(base, id, browser string) error {
	path, err := exec.LookPath(browser)
	if err != nil {
		return fmt.Errorf("%s: %w (-browser \"\" skips the page timings)", browser, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 1800))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		return err
	}
	fmt.Printf("\n%-60s %10s\n", "dashboard page (hash route → content visible)", "time")
	fmt.Printf("%-60s %10s\n", "load", time.Since(start).Round(time.Millisecond))
	for _, p := range pages(id) {
		start := time.Now()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("location.hash = %q", "#"+p[0]))); err != nil {
			return err
		}
		took := "timeout"
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := chromedp.Do(pctx, chromedp.WaitVisible(chromedp.CSS(p[1]))); err == nil {
			took = time.Since(start).Round(time.Millisecond).String()
		} else {
			shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('#load-error') || {}).textContent || ''`))
			took += " " + shown
		}
		cancel()
		fmt.Printf("%-60s %10s\n", p[0][max(0, len(p[0])-40):], took)
	}
	return nil
}
