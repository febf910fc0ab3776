package rest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/weirstream/weir/rest/api"
)

// scrape reads the JobManager's /metrics and returns the series of name
// by their label sets (name=value pairs sorted, joined by ,).
func scrape(t *testing.T, c *cluster, name string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(c.ep.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus's text format: %v", err)
	}
	out := map[string]float64{}
	if f := fams[name]; f != nil {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(ls, ",")] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestMetricsEndpoint: the JobManager serves every running job's metrics
// on /metrics, labelled with its own job ids (job_id, job_name, and
// task_name, subtask_index, operator_id, operator_name below), and a job
// that ended is gone at the next scrape while the others stay.
func TestMetricsEndpoint(t *testing.T) {
	c := newCluster(t)
	endless := c.submit(endlessJob, map[string]string{"pipeline.name": "endless"})
	agg := c.submit(aggJob, nil)
	key := func(id, name string) string { return fmt.Sprintf("job_id=%s,job_name=%s", id, name) }

	restarts := scrape(t, c, "weir_jobmanager_job_numRestarts")
	if _, ok := restarts[key(endless, "endless")]; !ok {
		t.Errorf("numRestarts series %v lack the running job %s", restarts, endless)
	}
	if _, ok := restarts[key(agg, "agg")]; !ok && c.state(agg) == api.StateRunning {
		t.Errorf("numRestarts series %v lack the running job %s", restarts, agg)
	}
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+endless, &d)
	j, _ := c.m.Job(endless)
	op := subtaskGroup(t, j, d.Vertices[0].Name, 0).Operators[0]
	in := scrape(t, c, "weir_taskmanager_job_task_operator_numRecordsOut")
	want := fmt.Sprintf("%s,operator_id=%s,operator_name=%s,subtask_index=0,task_name=%s", key(endless, "endless"), op.UID, op.Name, d.Vertices[0].Name)
	if _, ok := in[want]; !ok {
		t.Errorf("numRecordsOut series %v lack %s", in, want)
	}

	waitFor(t, "the aggregation to finish", func() bool { return c.state(agg) == api.StateFinished })
	restarts = scrape(t, c, "weir_jobmanager_job_numRestarts")
	if _, ok := restarts[key(agg, "agg")]; ok || len(restarts) != 1 {
		t.Errorf("after %s finished: numRestarts series %v, want only the running job's", agg, restarts)
	}
	if _, ok := restarts[key(endless, "endless")]; !ok {
		t.Errorf("numRestarts series %v lack the running job %s", restarts, endless)
	}
}
