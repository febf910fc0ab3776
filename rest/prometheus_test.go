package rest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/kafka"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/rest/api"
)

// EnvPromSeconds sets how long Prometheus scrapes the job's counters in
// TestPrometheusScrapesJobManager: 30 s by default, as the issue's
// acceptance asks (the test takes about 35 s); shorter for a quick run
// (WEIR_PROM_SECONDS=6 go test -run TestPrometheusScrapesJobManager
// ./rest/).
const EnvPromSeconds = "WEIR_PROM_SECONDS"

func promSeconds(t *testing.T) int {
	v := os.Getenv(EnvPromSeconds)
	if v == "" {
		return 30
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 {
		t.Fatalf("%s=%q: want a number of seconds, at least 2", EnvPromSeconds, v)
	}
	return n
}

// promJob is the acceptance test's view of its job: REST and Prometheus.
type promJob struct {
	t           *testing.T
	c           *cluster
	prom, id    string
	src         api.JobVertex
	topic, lagQ string
}

// restMetrics reads the source vertex's metrics ids through REST.
func (p *promJob) restMetrics(ids ...string) map[string]string {
	var ms []api.Metric
	get(p.t, p.c, "/v1/jobs/"+p.id+"/vertices/"+p.src.ID+"/metrics?get="+url.QueryEscape(strings.Join(ids, ",")), &ms)
	out := map[string]string{}
	for _, m := range ms {
		out[m.ID] = m.Value
	}
	return out
}

// restRecordsIn is the source vertex's numRecordsIn summed over its
// subtasks, through REST.
func (p *promJob) restRecordsIn() float64 {
	var agg []api.AggregatedMetric
	get(p.t, p.c, "/v1/jobs/"+p.id+"/vertices/"+p.src.ID+"/subtasks/metrics?get=numRecordsIn&agg=sum", &agg)
	if len(agg) != 1 {
		p.t.Fatalf("numRecordsIn of %s: %+v", p.src.Name, agg)
	}
	return *agg[0].Sum
}

// settled reads the held source's metrics ids and records in once they
// stand still: equal before and after a publish the source made while it
// waited for a credit (its accumulated back-pressured time grew between
// the two reads). A blocked source publishes every 100 ms of its wait, so
// a read before its first publish would see the counts of the last one.
func (p *promJob) settled(ids []string) (map[string]string, float64) {
	p.t.Helper()
	const bp = "0.accumulateBackPressuredTime"
	for {
		before, in := p.restMetrics(append([]string{bp}, ids...)...), p.restRecordsIn()
		waitFor(p.t, "a publish of the back-pressured source", func() bool { return p.restMetrics(bp)[bp] != before[bp] })
		after, in2 := p.restMetrics(ids...), p.restRecordsIn()
		delete(before, bp)
		if fmt.Sprint(before) == fmt.Sprint(after) && in == in2 {
			return after, in
		}
	}
}

// scrapedAfter waits (bounded) until Prometheus holds a sample of q's
// series scraped after t: what it answers then was read from the
// JobManager after t. This is the one skew the test allows — a scrape is
// a moment of its own, between two REST reads.
func (p *promJob) scrapedAfter(q string, t time.Time) {
	p.t.Helper()
	testsvc.PromWaitUntil(p.t, p.prom, "min(timestamp("+q+"))", func(v float64) bool { return v*1000 > float64(t.UnixMilli()) },
		"a scrape after "+t.Format(time.RFC3339Nano))
}

// TestPrometheusScrapesJobManager is the acceptance test of /metrics on a
// JobManager: a real Prometheus scrapes it every second while a Kafka-
// source job runs — held back by its sink first, then flowing, records
// produced every second, until Prometheus holds promSeconds of the job's
// counters (promSeconds+1 scrapes of its records in) — and PromQL over what it
// stored equals the job's own counters read through REST: Kafka lag per
// partition while held, the records-in rate over the flowing span, the
// last checkpoint's id, duration and size, records in and offsets at the
// end. Values that move are compared between two REST reads around the
// scrape; values that stand still (a held or drained job) exactly.
func TestPrometheusScrapesJobManager(t *testing.T) {
	brokers, bin := testsvc.Kafka(t), testsvc.Prometheus(t)
	seconds := promSeconds(t)
	topic := fmt.Sprintf("rest-prom-%d", time.Now().UnixNano())
	kc, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	testsvc.CreateTopic(t, kadm.NewClient(kc), topic, 2, nil)
	produced := map[int32]int64{}
	produce := func(from, n int) {
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint(i))})
		}
		if err := kc.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			produced[r.Partition]++
		}
	}
	const first = 3000
	produce(0, first)

	c := newCluster(t)
	p := &promJob{t: t, c: c, topic: topic}
	p.prom = testsvc.StartPrometheus(t, bin, strings.TrimPrefix(c.ep.URL(), "http://"), "/metrics")
	sink := newHoldSink(t, 500)
	p.id = submitKafkaJob(t, c, brokers, topic, sink)
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+p.id, &d)
	p.src = d.Vertices[0]
	j, _ := c.m.Job(p.id)
	op := subtaskGroup(t, j, p.src.Name, 0).Operators[0].Name
	p.lagQ = fmt.Sprintf(`weir_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_records_lag{job_id=%q}`, p.id)

	// Held: the sink blocks, the source waits for a credit (its
	// isBackPressured is 1 and stays so), and its lag per partition
	// stands still — REST and Prometheus must agree exactly.
	sink.await(t)
	waitFor(t, "the source to be back-pressured", func() bool { return p.restMetrics("0.isBackPressured")["0.isBackPressured"] == "1" })
	lagIDs := map[int32]string{}
	var ids []string
	for part := range produced {
		lagIDs[part] = fmt.Sprintf("0.%s.KafkaSourceReader.topic.%s.partition.%d.records-lag", op, topic, part)
		ids = append(ids, lagIDs[part])
	}
	held, heldIn := p.settled(ids)
	heldAt := time.Now()
	p.scrapedAfter(p.lagQ, heldAt)
	var lagSum int64
	for _, s := range testsvc.PromQuery(t, p.prom, p.lagQ, time.Time{}) {
		part, _ := strconv.Atoi(s.Labels["partition"])
		want := held[lagIDs[int32(part)]]
		if s.Labels["topic"] != topic || want == "" || formatFloat(s.Value) != want {
			t.Errorf("Prometheus: records-lag %v = %v; REST: %s = %q", s.Labels, s.Value, lagIDs[int32(part)], want)
		}
		lagSum += int64(s.Value)
	}
	if again := p.restMetrics(ids...); fmt.Sprint(again) != fmt.Sprint(held) || lagSum == 0 || p.restRecordsIn() != heldIn {
		t.Fatalf("held source: lag %v then %v (sum %d), records in %v: want it standing still, behind", held, again, lagSum, heldIn)
	}
	t.Logf("held: lag per partition %v, %v records in", held, heldIn)

	// Flowing: released, the source reads the rest and promSeconds of
	// new records; the records-in rate over that span is the same
	// computed from Prometheus's samples and from REST's counts.
	time.Sleep(time.Second) // a scrape inside the held span before the release, for the offset below
	released := time.Now()
	sink.release()
	inSel := fmt.Sprintf(`weir_taskmanager_job_task_numRecordsIn{job_id=%q,task_name=%q}`, p.id, p.src.Name)
	scrapes := func() float64 {
		n, _ := testsvc.PromValue(t, p.prom, "count_over_time("+inSel+"[1h])")
		return n
	}
	flowed := 0
	for ; flowed < 2 || scrapes() < float64(seconds+1); flowed++ {
		produce(first+flowed*100, 100)
		time.Sleep(time.Second)
	}
	total := float64(first + flowed*100)
	waitFor(t, "every record in", func() bool { return p.restRecordsIn() == total })
	checkCheckpointMetrics(t, p)
	settled := time.Now()
	inQ := "sum(" + inSel + ")"
	p.scrapedAfter(fmt.Sprintf(`weir_taskmanager_job_task_numRecordsIn{job_id=%q}`, p.id), settled)
	at := time.Now()
	span := at.Sub(released).Seconds() + 0.5 // the offset lands in the held span
	rateQ := fmt.Sprintf(`(%s - sum(%s offset %dms)) / %g`, inQ, inSel, int64(span*1000), span)
	if got := testsvc.PromQuery(t, p.prom, rateQ, at); len(got) != 1 || got[0].Value != (total-heldIn)/span {
		t.Errorf("Prometheus: %s = %v; REST: (%v - %v) / %g = %v", rateQ, got, total, heldIn, span, (total-heldIn)/span)
	}
	if got, _ := testsvc.PromValue(t, p.prom, inQ); got != total {
		t.Errorf("Prometheus: %s = %v, REST %v", inQ, got, total)
	}
	r, _ := testsvc.PromValue(t, p.prom, fmt.Sprintf(`sum(rate(%s[%ds]))`, inSel, flowed))
	n := scrapes()
	if n < float64(seconds+1) {
		t.Errorf("Prometheus scraped the job's records in %v times, want at least %d (%d s)", n, seconds+1, seconds)
	}
	t.Logf("records in: %v, %v per second over the %d s since the release; Prometheus's rate() over the last %d s: %v; %v scrapes of the job",
		total, (total-heldIn)/span, flowed, flowed, r, n)

	// Drained: no lag, each partition read to its end.
	checkDrained(t, p, op, produced, settled)
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// submitKafkaJob runs Kafka topic → key → sink at parallelism 1 on the
// cluster, checkpointing every 500 ms.
func submitKafkaJob(t *testing.T, c *cluster, brokers, topic string, sink operator.Sink) string {
	env := weir.NewEnvironment().SetParallelism(1).EnableCheckpointing(500*time.Millisecond, weir.ExactlyOnce, filepath.Join(t.TempDir(), "ck"))
	src, err := kafka.NewSource[string](kafka.Brokers(brokers), kafka.Topics(topic), kafka.StartingOffsets(kafka.Earliest()),
		kafka.Deserializer(func(v []byte) (string, error) { return string(v), nil }))
	if err != nil {
		t.Fatal(err)
	}
	in := weir.FromSource[string](env, src, topic, weir.WithUID("kafka"))
	last := weir.Reduce(weir.KeyBy(in, func(string) int { return 0 }), func(_, b string) string { return b }).UID("last")
	weir.SinkTo(last, sink, "held").UID("held")
	jg, err := env.JobGraph("prom-kafka")
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.m.SubmitGraph(jg, *env.RuntimeOptions())
	if err != nil {
		t.Fatal(err)
	}
	return job.ID()
}

// checkCheckpointMetrics: the last completed checkpoint Prometheus
// scraped lies between two REST reads around the scrape, and its
// duration and size there are those REST reports for that checkpoint.
func checkCheckpointMetrics(t *testing.T, p *promJob) {
	var before, after api.CheckpointingStatistics
	get(t, p.c, "/v1/jobs/"+p.id+"/checkpoints", &before)
	idQ := fmt.Sprintf(`weir_jobmanager_job_lastCompletedCheckpointId{job_id=%q}`, p.id)
	p.scrapedAfter(idQ, time.Now())
	at := time.Now()
	one := func(q string) float64 {
		s := testsvc.PromQuery(t, p.prom, q, at)
		if len(s) != 1 {
			t.Fatalf("%s: %d series, want 1", q, len(s))
		}
		return s[0].Value
	}
	id := int64(one(idQ))
	dur := one(fmt.Sprintf(`weir_jobmanager_job_lastCheckpointDuration{job_id=%q}`, p.id))
	size := one(fmt.Sprintf(`weir_jobmanager_job_lastCheckpointSize{job_id=%q}`, p.id))
	full := one(fmt.Sprintf(`weir_jobmanager_job_lastCheckpointFullSize{job_id=%q}`, p.id))
	get(t, p.c, "/v1/jobs/"+p.id+"/checkpoints", &after)
	if before.Latest.Completed == nil || id < before.Latest.Completed.ID || id > after.Latest.Completed.ID {
		t.Fatalf("Prometheus: last completed checkpoint %d; REST before %+v, after %d", id, before.Latest.Completed, after.Latest.Completed.ID)
	}
	for _, h := range after.History {
		if h.ID == id && (float64(h.EndToEndDuration) != dur || float64(h.CheckpointedSize) != size || float64(h.StateSize) != full) {
			t.Errorf("checkpoint %d: Prometheus duration %v ms, size %v, full size %v; REST %d ms, checkpointed_size %d, state_size %d",
				id, dur, size, full, h.EndToEndDuration, h.CheckpointedSize, h.StateSize)
		}
	}
	t.Logf("checkpoint %d (REST: %d to %d), %v ms, %v bytes", id, before.Latest.Completed.ID, after.Latest.Completed.ID, dur, size)
}

// checkDrained: with every record read, Prometheus and REST show no lag
// and each partition's offset at its record count.
func checkDrained(t *testing.T, p *promJob, op string, produced map[int32]int64, settled time.Time) {
	offQ := fmt.Sprintf(`weir_taskmanager_job_task_operator_KafkaSourceReader_topic_partition_currentOffset{job_id=%q}`, p.id)
	p.scrapedAfter(offQ, settled)
	p.scrapedAfter(p.lagQ, settled)
	for _, q := range []string{offQ, p.lagQ} {
		for _, s := range testsvc.PromQuery(t, p.prom, q, time.Time{}) {
			part, _ := strconv.Atoi(s.Labels["partition"])
			name := "currentOffset"
			want := float64(produced[int32(part)])
			if q == p.lagQ {
				name, want = "records-lag", 0
			}
			rid := fmt.Sprintf("0.%s.KafkaSourceReader.topic.%s.partition.%d.%s", op, p.topic, part, name)
			if got := p.restMetrics(rid)[rid]; s.Value != want || got != formatFloat(want) {
				t.Errorf("partition %d %s: Prometheus %v, REST %q, want %v", part, name, s.Value, got, want)
			}
		}
	}
}
