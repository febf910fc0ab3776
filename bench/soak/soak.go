package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/internal/txncheck"
)

// Fault kinds, one per cycle.
const (
	faultWeirKill    = "weir-kill"    // SIGKILL of a Weir process, restarted with --restore latest
	faultWeirPause   = "weir-pause"   // SIGSTOP, then SIGCONT 0.5–PauseMax later
	faultKafkaHard   = "kafka-hard"   // SIGKILL of the broker, restarted
	faultKafkaClean  = "kafka-clean"  // SIGTERM of the broker (controlled shutdown), restarted
	faultMariaDBKill = "mariadb-kill" // SIGKILL of MariaDB (crash recovery), restarted
	faultMariaDBStop = "mariadb-stop" // SIGTERM of MariaDB (clean shutdown), restarted
)

var faultKinds = []string{faultWeirKill, faultWeirPause, faultKafkaHard, faultKafkaClean, faultMariaDBKill, faultMariaDBStop}

// Config is one soak run.
type Config struct {
	Root        string   // repository root (scripts/services.sh, examples/billing/billing.sql)
	Dir         string   // scratch directory: private services, checkpoints, logs
	Weir        []string // the weir command: [weir] or [self weir-child]
	Cycles      int
	MaxDuration time.Duration // stop starting cycles after this long (0: no limit)
	Seed        int64
	// Weights of the fault kinds; Sequence, when set, is used instead (the
	// kinds in order, repeated).
	Weights  map[string]int
	Sequence []string
	// Before each fault the jobs run RunMin–RunMax; a pause lasts 0.5 s–PauseMax.
	RunMin, RunMax, PauseMax time.Duration
	Recovery                 time.Duration // longest wait for both jobs to make progress after a fault
	Drain                    time.Duration // longest wait for the jobs to catch up at the end
	Checkpoint               time.Duration // the jobs' checkpoint interval
	GoMaxProcs               int           // GOMAXPROCS of the Weir processes (0: inherit)
	CopyGuarantee            string        // the copy's sink.delivery-guarantee ("": exactly-once)
	CopyIsolation            string        // the copy's source isolation level ("": read_committed)
	Log                      io.Writer     // progress lines
}

// Report is what the soak measured.
type Report struct {
	Cycles     int
	Faults     map[string]int
	KillsByJob map[string]int
	Recovery   map[string][]time.Duration
	Stalls     map[string]int // faults after which a job made no progress within Config.Recovery
	Elapsed    time.Duration
	Jobs       map[string]jobReport
	Copy       copyCheck
	CopyTxns   [2]int64 // input transactions ended, of them aborted by the producer
	Billing    billingCheck
	BillDups   int64 // duplicates the producer sent
	ProduceErr int64 // bills the client gave up on
	CopyErr    int64 // copy-input transactions cut by a fault (client re-created; outcome read from the log)
	KafkaOpen  []string
	XAOpen     []string
	LSOChecked int
	LSOBehind  []string
	Drained    bool
	Problems   []string // anything that makes the verdict FAIL besides the counts
}

type jobReport struct {
	starts, restores int
	selfExits        map[string]int
}

// OK is the verdict.
func (r *Report) OK() bool {
	return r.Copy.ok() && r.Billing.ok() && len(r.KafkaOpen) == 0 && len(r.XAOpen) == 0 &&
		len(r.LSOBehind) == 0 && r.LSOChecked > 0 && len(r.Problems) == 0
}

const partitions = 3

// soak holds a run's moving parts.
type soak struct {
	cfg     Config
	rnd     *rand.Rand
	kafka   *kafkaBroker
	maria   *mariaDB
	jobs    map[string]*job
	tail    *outputTail
	totals  *sql.DB
	report  *Report
	logf    func(format string, args ...any)
	started time.Time
}

// Run runs the soak and returns its report; an error means the soak
// itself could not run (the verdict is in the report).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	s := &soak{cfg: cfg, rnd: rand.New(rand.NewSource(cfg.Seed)), jobs: map[string]*job{}, tail: &outputTail{},
		report: &Report{Faults: map[string]int{}, KillsByJob: map[string]int{}, Recovery: map[string][]time.Duration{},
			Stalls: map[string]int{}, Jobs: map[string]jobReport{}}, started: time.Now()}
	s.logf = func(format string, args ...any) {
		fmt.Fprintf(cfg.Log, "[soak %6.1fs] %s\n", time.Since(s.started).Seconds(), fmt.Sprintf(format, args...))
	}
	p, err := findPaths(cfg.Root)
	if err != nil {
		return nil, err
	}
	defer s.shutdown()
	if err := s.startServices(p); err != nil {
		return nil, err
	}
	if err := s.createTopics(ctx); err != nil {
		return nil, err
	}
	if err := s.startJobs(); err != nil {
		return nil, err
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	copyP, billP, loadDone := s.startLoad(loadCtx)
	tailCtx, stopTail := context.WithCancel(context.Background())
	defer stopTail()
	go func() { _ = s.tail.run(tailCtx, s.kafka.addr(), "soak-out") }()

	s.waitProgress(ctx, "start")
	for c := 0; c < cfg.Cycles && ctx.Err() == nil; c++ {
		if cfg.MaxDuration > 0 && time.Since(s.started) > cfg.MaxDuration {
			s.logf("max duration %v reached after %d cycles", cfg.MaxDuration, c)
			break
		}
		s.cycle(ctx, c)
		s.report.Cycles++
	}
	stopLoad()
	<-loadDone
	s.report.CopyTxns = [2]int64{copyP.txns.Load(), copyP.aborts.Load()}
	s.report.BillDups = billP.dups.Load()
	s.report.ProduceErr = billP.errs.Load()
	s.report.CopyErr = copyP.errs.Load()
	s.logf("load stopped: %d input transactions (%d aborted), %d bills sent (%d duplicates, %d errors)",
		copyP.txns.Load(), copyP.aborts.Load(), billP.sent.Load(), billP.dups.Load(), billP.errs.Load())
	// An interrupt ends the cycles, not the check: the final check runs
	// on its own clock.
	fctx, cancel := context.WithTimeout(context.Background(), cfg.Drain+5*time.Minute)
	defer cancel()
	if err := s.finish(fctx); err != nil {
		return s.report, err
	}
	s.report.Elapsed = time.Since(s.started)
	return s.report, nil
}

func (s *soak) startServices(p paths) error {
	var err error
	s.logf("starting private Kafka and MariaDB under %s", s.cfg.Dir)
	if s.kafka, err = newKafkaBroker(p, filepath.Join(s.cfg.Dir, "kafka")); err != nil {
		return err
	}
	if err := s.kafka.start(); err != nil {
		return err
	}
	if s.maria, err = newMariaDB(p, filepath.Join(s.cfg.Dir, "mariadb")); err != nil {
		return err
	}
	if err := s.maria.start(); err != nil {
		return err
	}
	if err := s.maria.setup(); err != nil {
		return err
	}
	s.totals, err = sql.Open("mysql", s.maria.DSN())
	s.logf("kafka on %s (up in %v), mariadb on 127.0.0.1:%d", s.kafka.addr(), s.kafka.lastStartElapsed.Round(time.Millisecond), s.maria.port)
	return err
}

func (s *soak) createTopics(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.kafka.addr()))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, t := range []struct {
		name string
		n    int32
	}{{"soak-in", partitions}, {"soak-out", partitions}, {"bills", partitions}, {"bills-dlq", 1}} {
		resp, err := adm.CreateTopic(ctx, t.n, 1, nil, t.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("create topic %s on the private broker: %w", t.name, err)
		}
	}
	return nil
}

// copySQL is the Kafka→Kafka copy, exactly-once from read_committed
// (transaction.timeout.ms at the broker's maximum, 15 min: on a loaded
// machine a bounce took the broker 4 min to come back, longer than the
// 2 min first used, and the broker aborted a pre-committed transaction —
// data loss, which Weir reports and stops on, as it must)
// unless guarantee or isolation say otherwise: control runs in which the
// checker must find duplicates or aborted reads.
func copySQL(brokers, guarantee, isolation string) string {
	if guarantee == "" {
		guarantee = "exactly-once"
	}
	if isolation == "" {
		isolation = "read_committed"
	}
	return fmt.Sprintf(`SET 'execution.checkpointing.mode' = 'EXACTLY_ONCE';
SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'soak-copy';
CREATE TABLE src (id BIGINT, payload STRING) WITH (
  'connector' = 'kafka', 'topic' = 'soak-in', 'properties.bootstrap.servers' = '%[1]s',
  'properties.isolation.level' = '%[3]s',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
CREATE TABLE dst (id BIGINT, payload STRING) WITH (
  'connector' = 'kafka', 'topic' = 'soak-out', 'properties.bootstrap.servers' = '%[1]s',
  'sink.delivery-guarantee' = '%[2]s', 'sink.transactional-id-prefix' = 'soak-copy',
  'properties.transaction.timeout.ms' = '900000', 'format' = 'json');
INSERT INTO dst SELECT id, payload FROM src;
`, brokers, guarantee, isolation)
}

// billingSQL is examples/billing/billing.sql made unbounded, with the
// private services filled in.
func billingSQL(root, brokers, jdbcURL string) (string, error) {
	src, err := os.ReadFile(filepath.Join(root, "examples", "billing", "billing.sql"))
	if err != nil {
		return "", err
	}
	s := string(src)
	const bounded = "'scan.bounded.mode' = 'latest-offset',"
	if !strings.Contains(s, bounded) {
		return "", fmt.Errorf("examples/billing/billing.sql: no %q line to make the soak's job unbounded", bounded)
	}
	s = strings.Replace(s, bounded, "", 1)
	s = strings.NewReplacer("${WEIR_KAFKA_BROKERS}", brokers, "${WEIR_BILLING_JDBC_URL}", jdbcURL,
		"${WEIR_BILLING_CHECKPOINTS}", "unused-see-checkpoint-dir").Replace(s)
	if strings.Contains(s, "${") {
		return "", errors.New("examples/billing/billing.sql uses an environment variable the soak does not set")
	}
	return s, nil
}

func (s *soak) startJobs() error {
	billing, err := billingSQL(s.cfg.Root, s.kafka.addr(), fmt.Sprintf("jdbc:mysql://127.0.0.1:%d/weir", s.maria.port))
	if err != nil {
		return err
	}
	var env []string
	if s.cfg.GoMaxProcs > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", s.cfg.GoMaxProcs))
	}
	interval := "execution.checkpointing.interval=" + s.cfg.Checkpoint.String()
	for name, script := range map[string]string{"copy": copySQL(s.kafka.addr(), s.cfg.CopyGuarantee, s.cfg.CopyIsolation), "billing": billing} {
		path := filepath.Join(s.cfg.Dir, name+".sql")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			return err
		}
		j := newJob(name, append(append([]string(nil), s.cfg.Weir...), "run"), path,
			filepath.Join(s.cfg.Dir, "checkpoints-"+name), filepath.Join(s.cfg.Dir, name+".log"), env, interval)
		s.jobs[name] = j
		go j.run()
	}
	return nil
}

func (s *soak) startLoad(ctx context.Context) (*copyProducer, *billProducer, chan struct{}) {
	cp := &copyProducer{brokers: s.kafka.addr(), topic: "soak-in", every: 50 * time.Millisecond, abortRate: 0.1,
		rnd: rand.New(rand.NewSource(s.cfg.Seed + 1))}
	bp := &billProducer{brokers: s.kafka.addr(), topic: "bills", perTick: 5, every: 50 * time.Millisecond,
		dupRate: 0.05, accounts: 500, rnd: rand.New(rand.NewSource(s.cfg.Seed + 2))}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cpDone := make(chan struct{})
		go func() { cp.run(ctx); close(cpDone) }()
		bp.run(ctx)
		<-cpDone
	}()
	return cp, bp, done
}

func (s *soak) pickFault(c int) string {
	if len(s.cfg.Sequence) > 0 {
		return s.cfg.Sequence[c%len(s.cfg.Sequence)]
	}
	total := 0
	for _, k := range faultKinds {
		total += s.cfg.Weights[k]
	}
	n := s.rnd.Intn(total)
	for _, k := range faultKinds {
		if n -= s.cfg.Weights[k]; n < 0 {
			return k
		}
	}
	return faultWeirKill
}

func (s *soak) randDur(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rnd.Int63n(int64(hi-lo)))
}

// cycle lets the jobs run a while, injects one fault and waits until
// both jobs have committed new output.
func (s *soak) cycle(ctx context.Context, c int) {
	sleepCtx(ctx, s.randDur(s.cfg.RunMin, s.cfg.RunMax))
	f := s.pickFault(c)
	s.report.Faults[f]++
	target := []string{"copy", "billing"}[s.rnd.Intn(2)]
	var err error
	detail := ""
	switch f {
	case faultWeirKill:
		s.jobs[target].kill()
		s.report.KillsByJob[target]++
		detail = target
	case faultWeirPause:
		d := s.randDur(500*time.Millisecond, s.cfg.PauseMax)
		s.jobs[target].pause(d)
		detail = fmt.Sprintf("%s for %v", target, d.Round(time.Millisecond))
	case faultKafkaHard:
		err = s.kafka.bounce(syscall.SIGKILL)
	case faultKafkaClean:
		err = s.kafka.bounce(syscall.SIGTERM)
	case faultMariaDBKill:
		err = s.maria.restart(syscall.SIGKILL)
	case faultMariaDBStop:
		err = s.maria.restart(syscall.SIGTERM)
	}
	if err != nil {
		s.report.Problems = append(s.report.Problems, fmt.Sprintf("cycle %d: %s: %v", c+1, f, err))
		s.logf("cycle %d: %s failed: %v", c+1, f, err)
	}
	d := s.waitProgress(ctx, f)
	s.logf("cycle %d: %s %s; both jobs committed new output %v later (copy %d ids, billing %d bills)",
		c+1, f, detail, d.Round(time.Millisecond), s.tail.distinct.Load(), billsCounted(s.totals))
}

// waitProgress waits until both jobs have committed output beyond what
// they had when it was called.
func (s *soak) waitProgress(ctx context.Context, f string) time.Duration {
	t0 := time.Now()
	copy0, bill0 := s.tail.distinct.Load(), billsCounted(s.totals)
	for time.Since(t0) < s.cfg.Recovery && ctx.Err() == nil {
		if s.tail.distinct.Load() > copy0 && billsCounted(s.totals) > bill0 {
			d := time.Since(t0)
			s.report.Recovery[f] = append(s.report.Recovery[f], d)
			return d
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	if ctx.Err() != nil {
		return time.Since(t0)
	}
	s.report.Stalls[f]++
	s.logf("after %s: no progress of both jobs within %v", f, s.cfg.Recovery)
	return time.Since(t0)
}

// finish waits for the jobs to catch up with the finished input, stops
// them cleanly and checks everything.
func (s *soak) finish(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.kafka.addr()))
	if err != nil {
		return err
	}
	defer cl.Close()
	inputs, err := readOutcomes(ctx, cl, s.kafka.addr(), "soak-in", partitions)
	if err != nil {
		return err
	}
	wantCopy := map[int64]bool{}
	for _, r := range inputs.visible {
		wantCopy[r.id] = true
	}
	bills, err := readBills(ctx, cl, s.kafka.addr(), "bills", partitions)
	if err != nil {
		return err
	}
	distinct := map[string]bool{}
	for _, b := range bills {
		distinct[b.BillID] = true
	}
	s.logf("draining: %d committed input records to copy, %d distinct bills to count", len(wantCopy), len(distinct))
	t0 := time.Now()
	for time.Since(t0) < s.cfg.Drain && ctx.Err() == nil {
		if s.tail.distinct.Load() >= int64(len(wantCopy)) && billsCounted(s.totals) >= int64(len(distinct)) {
			s.report.Drained = true
			break
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
	s.logf("drained=%v after %v (copy %d ids, billing %d bills); stopping the jobs with SIGTERM",
		s.report.Drained, time.Since(t0).Round(time.Millisecond), s.tail.distinct.Load(), billsCounted(s.totals))
	for name, j := range s.jobs {
		j.stop(time.Minute)
		starts, restores, exits := j.counts()
		s.report.Jobs[name] = jobReport{starts, restores, exits}
	}
	if s.report.Copy, err = checkCopy(ctx, cl, s.kafka.addr(), "soak-in", "soak-out", partitions); err != nil {
		return err
	}
	if s.report.Billing, err = checkBilling(ctx, bills, s.totals); err != nil {
		return err
	}
	adm := kadm.NewClient(cl)
	if s.report.KafkaOpen, err = txncheck.Lingering(openKafkaTxns(ctx, adm), 6, time.Second); err != nil {
		return err
	}
	root, err := sql.Open("mysql", s.maria.rootDSN())
	if err != nil {
		return err
	}
	defer root.Close()
	if s.report.XAOpen, err = txncheck.Lingering(func() ([]string, error) { return txncheck.XARecover(root) }, 6, time.Second); err != nil {
		return err
	}
	s.report.LSOChecked, s.report.LSOBehind, err = lsoBehind(ctx, cl, partitions, "soak-out", "soak-in", "bills")
	return err
}

func (s *soak) shutdown() {
	for _, j := range s.jobs {
		select {
		case <-j.stopped:
		default:
			j.stop(30 * time.Second)
		}
	}
	if s.totals != nil {
		s.totals.Close()
	}
	if s.kafka != nil {
		s.kafka.close()
	}
	if s.maria != nil {
		s.maria.close()
	}
}

// Print writes the summary and the verdict.
func (r *Report) Print(w io.Writer, cfg Config) {
	fmt.Fprintf(w, "\n== soak summary (seed %d) ==\n", cfg.Seed)
	fmt.Fprintf(w, "cycles: %d in %v\n", r.Cycles, r.Elapsed.Round(time.Second))
	var fs []string
	for _, k := range faultKinds {
		fs = append(fs, fmt.Sprintf("%s %d", k, r.Faults[k]))
	}
	fmt.Fprintf(w, "faults: %s (weir-kill: copy %d, billing %d)\n", strings.Join(fs, ", "), r.KillsByJob["copy"], r.KillsByJob["billing"])
	for _, k := range faultKinds {
		ds := r.Recovery[k]
		if len(ds) == 0 && r.Stalls[k] == 0 {
			continue
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		med, max, mean := time.Duration(0), time.Duration(0), time.Duration(0)
		if len(ds) > 0 {
			med, max, mean = ds[len(ds)/2], ds[len(ds)-1], sum/time.Duration(len(ds))
		}
		fmt.Fprintf(w, "  recovery after %-12s median %v, mean %v, max %v; no progress within %v: %d\n", k,
			med.Round(time.Millisecond), mean.Round(time.Millisecond), max.Round(time.Millisecond), cfg.Recovery, r.Stalls[k])
	}
	for _, name := range []string{"copy", "billing"} {
		j := r.Jobs[name]
		fmt.Fprintf(w, "weir %s: %d starts (%d with --restore latest); exits not caused by the soak: %v\n", name, j.starts, j.restores, j.selfExits)
	}
	c := r.Copy
	fmt.Fprintf(w, "copy: input %d transactions (%d aborted by the producer, %d cut by faults): %d committed records, %d aborted records\n",
		r.CopyTxns[0], r.CopyTxns[1], r.CopyErr, c.inCommitted, c.inAborted)
	fmt.Fprintf(w, "copy: output %d records visible to read_committed, %d records in aborted transactions (invisible)\n", c.outVisible, c.outAbortedTxn)
	fmt.Fprintf(w, "copy: lost %d, duplicated %d, aborted-read %d, phantom %d", c.lost, c.duplicated, c.abortedRead, c.phantom)
	if len(c.lostSample)+len(c.dupSample) > 0 {
		fmt.Fprintf(w, " (lost ids %v, duplicated ids %v)", c.lostSample, c.dupSample)
	}
	fmt.Fprintln(w)
	b := r.Billing
	fmt.Fprintf(w, "billing: input %d bill records (%d duplicates sent), %d distinct bills over %d accounts; produce errors %d\n",
		b.billRecords, r.BillDups, b.distinct, b.accountsWant, r.ProduceErr)
	fmt.Fprintf(w, "billing: account_totals %d accounts, %d bills counted; lost %d, duplicated %d, accounts wrong %d\n",
		b.accounts, b.billsCounted, b.lost, b.duplicated, b.wrongAccounts)
	if len(b.samples) > 0 {
		fmt.Fprintf(w, "  %s\n", joinSample(b.samples))
	}
	fmt.Fprintf(w, "drained before stop: %v\n", r.Drained)
	fmt.Fprintf(w, "open transactions held over 5 s: kafka %d %v, mariadb XA %d %v\n", len(r.KafkaOpen), r.KafkaOpen, len(r.XAOpen), r.XAOpen)
	fmt.Fprintf(w, "LSO = HWM: %d of %d partitions (soak-out, soak-in, bills) %v\n", r.LSOChecked-len(r.LSOBehind), r.LSOChecked, r.LSOBehind)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if r.OK() {
		fmt.Fprintln(w, "VERDICT: OK")
	} else {
		fmt.Fprintln(w, "VERDICT: FAIL")
	}
}
