package prom

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirstream/weir/metrics"
)

// TestCollectorReadsRegistry: the collector exposes exactly what the
// registry's groups hold, under Flink's names and labels with weir_, and
// reads them again at every scrape.
func TestCollectorReadsRegistry(t *testing.T) {
	r := metrics.NewRegistry()
	j := r.AddJob("id-1", "billing")
	j.NumRestarts.Store(2)
	j.CompletedCheckpoints.Store(7)
	j.LastCompletedCheckpointID.Store(9)
	src := metrics.NewOperator("Source: bills", "bills")
	src.RecordsOut.Store(120)
	sink := metrics.NewOperator("Sink: totals", "totals")
	sink.RecordsIn.Store(40)
	sink.InputWatermark.Store(1700000000000)
	st := &metrics.Subtask{Task: "Source: bills -> Sink: totals", Index: 1, Operators: []*metrics.Operator{src, sink}}
	st.RecordsOut.Store(40)
	j.NewAttempt([]*metrics.Subtask{st})

	want := `
# HELP weir_jobmanager_job_numRestarts Failovers of the job.
# TYPE weir_jobmanager_job_numRestarts gauge
weir_jobmanager_job_numRestarts{job_id="id-1",job_name="billing"} 2
# HELP weir_jobmanager_job_lastCompletedCheckpointId Id of the last completed checkpoint (0: none).
# TYPE weir_jobmanager_job_lastCompletedCheckpointId gauge
weir_jobmanager_job_lastCompletedCheckpointId{job_id="id-1",job_name="billing"} 9
# HELP weir_taskmanager_job_task_numRecordsOut Records the subtask's chain emitted.
# TYPE weir_taskmanager_job_task_numRecordsOut gauge
weir_taskmanager_job_task_numRecordsOut{job_id="id-1",job_name="billing",subtask_index="1",task_name="Source: bills -> Sink: totals"} 40
# HELP weir_taskmanager_job_task_operator_numRecordsIn Records the operator received (a source: read).
# TYPE weir_taskmanager_job_task_operator_numRecordsIn gauge
weir_taskmanager_job_task_operator_numRecordsIn{job_id="id-1",job_name="billing",operator_id="bills",operator_name="Source: bills",subtask_index="1",task_name="Source: bills -> Sink: totals"} 0
weir_taskmanager_job_task_operator_numRecordsIn{job_id="id-1",job_name="billing",operator_id="totals",operator_name="Sink: totals",subtask_index="1",task_name="Source: bills -> Sink: totals"} 40
# HELP weir_taskmanager_job_task_operator_numRecordsOut Records the operator emitted.
# TYPE weir_taskmanager_job_task_operator_numRecordsOut gauge
weir_taskmanager_job_task_operator_numRecordsOut{job_id="id-1",job_name="billing",operator_id="bills",operator_name="Source: bills",subtask_index="1",task_name="Source: bills -> Sink: totals"} 120
weir_taskmanager_job_task_operator_numRecordsOut{job_id="id-1",job_name="billing",operator_id="totals",operator_name="Sink: totals",subtask_index="1",task_name="Source: bills -> Sink: totals"} 0
# HELP weir_taskmanager_job_task_operator_currentInputWatermark Last watermark received, ms (Long.MIN_VALUE: none).
# TYPE weir_taskmanager_job_task_operator_currentInputWatermark gauge
weir_taskmanager_job_task_operator_currentInputWatermark{job_id="id-1",job_name="billing",operator_id="bills",operator_name="Source: bills",subtask_index="1",task_name="Source: bills -> Sink: totals"} -9.223372036854776e+18
weir_taskmanager_job_task_operator_currentInputWatermark{job_id="id-1",job_name="billing",operator_id="totals",operator_name="Sink: totals",subtask_index="1",task_name="Source: bills -> Sink: totals"} 1.7e+12
`
	names := []string{"weir_jobmanager_job_numRestarts", "weir_jobmanager_job_lastCompletedCheckpointId",
		"weir_taskmanager_job_task_numRecordsOut", "weir_taskmanager_job_task_operator_numRecordsIn",
		"weir_taskmanager_job_task_operator_numRecordsOut", "weir_taskmanager_job_task_operator_currentInputWatermark"}
	if err := testutil.CollectAndCompare(NewCollector(r), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	// A scrape reads the values as they are now; a new attempt replaces
	// the subtasks; a removed job is gone.
	j.NumRestarts.Store(3)
	j.NewAttempt(nil)
	after := `
# HELP weir_jobmanager_job_numRestarts Failovers of the job.
# TYPE weir_jobmanager_job_numRestarts gauge
weir_jobmanager_job_numRestarts{job_id="id-1",job_name="billing"} 3
`
	if err := testutil.CollectAndCompare(NewCollector(r), strings.NewReader(after), "weir_jobmanager_job_numRestarts"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(NewCollector(r), "weir_taskmanager_job_task_numRecordsIn"); n != 0 {
		t.Fatalf("%d task series after a new attempt without subtasks, want 0", n)
	}
	r.Remove(j)
	if n := testutil.CollectAndCount(NewCollector(r)); n != 0 {
		t.Fatalf("%d series after the job was removed, want 0", n)
	}
}

func TestFromConfig(t *testing.T) {
	for _, c := range []struct {
		set  map[string]string
		want string // "off", the config, or the error
	}{
		{nil, "off"},
		{map[string]string{KeyPort: "9300"}, "127.0.0.1:9300"},
		{map[string]string{KeyFactoryClass: FactoryClass}, "127.0.0.1:9249"},
		{map[string]string{KeyPort: "9250-9260", KeyHost: "0.0.0.0"}, "0.0.0.0:9250-9260"},
		{map[string]string{KeyPort: "92x"}, "'metrics.reporter.prom.port' = '92x': want a port (9249) or a range (9250-9260) within 0-65535"},
		{map[string]string{KeyFactoryClass: "org.apache.flink.metrics.jmx.JMXReporterFactory"},
			"'metrics.reporter.prom.factory.class' = 'org.apache.flink.metrics.jmx.JMXReporterFactory': the only reporter is Prometheus's, '" + FactoryClass + "'"},
	} {
		cfg, on, err := FromConfig(func(k string) (string, bool) { v, ok := c.set[k]; return v, ok })
		got := "off"
		switch {
		case err != nil:
			got = err.Error()
		case on:
			got = cfg.Host + ":" + cfg.Ports
		}
		if got != c.want {
			t.Errorf("%v: got %q, want %q", c.set, got, c.want)
		}
	}
}

// TestCollectorCustomGauges: a connector's gauges are exported in the
// operator scope with their own labels after the operator's, their name
// made a Prometheus name as Flink's reporter does; the time ratios and
// rates are floats; Vertices sums a vertex's subtasks.
func TestCollectorCustomGauges(t *testing.T) {
	r := metrics.NewRegistry()
	j := r.AddJob("id-1", "lag")
	src := metrics.NewOperator("Source: bills", "bills")
	src.Gauge("KafkaSourceReader.topic.partition.records-lag", "topic", "bills", "partition", "0").Store(42)
	src.Gauge("KafkaSourceReader.topic.partition.records-lag", "topic", "bills", "partition", "1").Store(7)
	src.Gauge("pendingRecords").Store(49)
	a := &metrics.Subtask{Task: "Source: bills", Index: 0, Operators: []*metrics.Operator{src}}
	a.BusyMsPerSecond.Store(250.5)
	a.BackPressuredMsPerSecond.Store(700)
	a.RecordsOut.Store(10)
	a.BackPressured.Store(true)
	b := &metrics.Subtask{Task: "Source: bills", Index: 1}
	b.BusyMsPerSecond.Store(100)
	b.RecordsOut.Store(5)
	j.NewAttempt([]*metrics.Subtask{b, a})
	pre, post := `job_id="id-1",job_name="lag",operator_id="bills",operator_name="Source: bills"`, `subtask_index="0",task_name="Source: bills"`
	labels := pre + "," + post
	want := `
# HELP weir_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_records_lag Published by the operator's connector.
# TYPE weir_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_records_lag gauge
weir_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_records_lag{` + pre + `,partition="0",` + post + `,topic="bills"} 42
weir_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_records_lag{` + pre + `,partition="1",` + post + `,topic="bills"} 7
# HELP weir_taskmanager_job_task_operator_pendingRecords Published by the operator's connector.
# TYPE weir_taskmanager_job_task_operator_pendingRecords gauge
weir_taskmanager_job_task_operator_pendingRecords{` + labels + `} 49
# HELP weir_taskmanager_job_task_busyTimeMsPerSecond Ms per second the subtask was busy, over the last 5 s.
# TYPE weir_taskmanager_job_task_busyTimeMsPerSecond gauge
weir_taskmanager_job_task_busyTimeMsPerSecond{job_id="id-1",job_name="lag",subtask_index="0",task_name="Source: bills"} 250.5
weir_taskmanager_job_task_busyTimeMsPerSecond{job_id="id-1",job_name="lag",subtask_index="1",task_name="Source: bills"} 100
`
	if err := testutil.CollectAndCompare(NewCollector(r), strings.NewReader(want),
		"weir_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_records_lag",
		"weir_taskmanager_job_task_operator_pendingRecords", "weir_taskmanager_job_task_busyTimeMsPerSecond"); err != nil {
		t.Fatal(err)
	}
	if v, ok := src.Find("pendingRecords"); !ok || v != 49 {
		t.Errorf("Find(pendingRecords) = %d, %v", v, ok)
	}
	vs := j.Vertices()
	if len(vs) != 1 {
		t.Fatalf("Vertices: %+v, want one", vs)
	}
	v := vs[0]
	if v.Parallelism != 2 || v.RecordsOut != 15 || v.BusyMsPerSecond != 175.25 || v.MaxBusyMsPerSecond != 250.5 ||
		v.BackPressuredMsPerSecond != 350 || v.MaxBackPressuredMsPerSecond != 700 || v.BackPressuredSubtasks != 1 {
		t.Errorf("Vertices()[0] = %+v", v)
	}
}
