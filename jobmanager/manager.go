package jobmanager

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/rest/api"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/session"
)

// Errors of the JobManager's calls; the REST server maps them to HTTP
// statuses (404, 409, 400, 400).
var (
	ErrJobNotFound   = errors.New("jobmanager: job not found")
	ErrJobNotRunning = errors.New("jobmanager: job is not running")
	ErrBadJob        = errors.New("jobmanager: job refused")
	ErrBadRequest    = errors.New("jobmanager: bad request")
)

// Options configures a Manager. Every field documents its default.
type Options struct {
	// Dir holds the job store (jobs.json) and, unless the jobs set
	// execution.checkpointing.dir, their checkpoints under
	// Dir/checkpoints/<job id>. Default "": no store — jobs are forgotten
	// when the process ends and nothing resumes (weir run).
	Dir string
	// Config supplies the jobs' default settings and the slot count
	// (taskmanager.numberOfTaskSlots, default 32; -1: unlimited, as weir
	// run uses). Default: empty.
	Config Config
	// Logger receives the JobManager's and the jobs' logs. Default:
	// slog.Default().
	Logger *slog.Logger
	// DeferResume leaves the stored unended jobs to Resume instead of
	// resuming them in Open: weir jobmanager binds its REST port first, so
	// one that cannot serve resumes nothing. Default false.
	DeferResume bool
}

// Manager is the JobManager of a session cluster with local slots: it
// runs many jobs at once, each through runtime.Start, keeps their records
// in the store, and at Open resumes the jobs that had not ended from
// their latest checkpoints (after a crash, a SIGKILL or a Close).
type Manager struct {
	opts  Options
	store *store
	// lock is Dir's exclusive lock (nil without Dir), holder its content.
	lock   *checkpointstorage.FileLock
	holder DirHolder
	slots  int
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	mu     struct {
		sync.Mutex
		jobs   map[string]*Job
		order  []string
		closed bool
	}
}

// Open starts a JobManager: it locks Dir — a second JobManager on it is
// refused with a *DirLockedError naming the first — loads the store and
// resumes its unended jobs (unless DeferResume).
func Open(opts Options) (*Manager, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Config == nil {
		opts.Config = Config{}
	}
	slots, err := opts.Config.Int(KeySlots, DefaultSlots)
	if err != nil {
		return nil, err
	}
	m := &Manager{opts: opts, slots: slots}
	m.ctx, m.stop = context.WithCancel(context.Background())
	m.mu.jobs = map[string]*Job{}
	if opts.Dir != "" {
		if m.lock, m.holder, err = lockDir(opts.Dir); err != nil {
			return nil, err
		}
		if m.store, err = openStore(opts.Dir); err != nil {
			_ = m.lock.Release()
			return nil, err
		}
	}
	if !opts.DeferResume {
		m.Resume()
	}
	return m, nil
}

// Resume resumes the stored jobs that had not ended (once: Open does it
// unless Options.DeferResume).
func (m *Manager) Resume() {
	for _, r := range m.store.all() {
		m.resume(r)
	}
}

// SetRESTAddress records the JobManager's REST URL in its directory's lock
// file, so a second JobManager refused the directory names it.
func (m *Manager) SetRESTAddress(url string) error {
	if m.lock == nil {
		return nil
	}
	m.holder.REST = url
	return m.lock.Rewrite(encodeDirHolder(m.holder))
}

// resume shows a stored job, and runs it again when it had not ended.
func (m *Manager) resume(r record) {
	if api.Terminal(r.State) || r.Script == "" {
		if !api.Terminal(r.State) { // a Go program's job: its graph is gone
			r.State = api.StateSuspended
		}
		m.add(&Job{id: r.ID, name: r.Name, ckDir: r.CheckpointDir}, r)
		return
	}
	restore := r.Restore
	if hasCheckpoint(r.CheckpointDir) {
		restore = runtime.RestoreLatest
	}
	m.opts.Logger.Info("resuming job", "job", r.Name, "jid", r.ID, "restore", restore)
	if _, err := m.startSQL(r, restore); err != nil {
		now := time.Now()
		j := &Job{id: r.ID, name: r.Name, ckDir: r.CheckpointDir}
		j.mu.rec = r
		j.mu.rec.Exceptions = append([]api.Exception{exceptionOf(err, now, nil, true)}, r.Exceptions...)
		j.setStateLocked(api.StateFailed, now)
		m.add(j, j.mu.rec)
		m.persist(j)
	}
}

// hasCheckpoint reports whether dir holds a completed checkpoint.
func hasCheckpoint(dir string) bool {
	if dir == "" {
		return false
	}
	fs, err := checkpointstorage.Open(dir, checkpointstorage.Options{})
	if err != nil {
		return false
	}
	defer fs.Close()
	_, _, err = fs.Latest()
	return err == nil
}

func (m *Manager) add(j *Job, r record) {
	j.mu.Lock()
	j.mu.rec = r
	j.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.mu.order, j.id) {
		m.mu.order = append(m.mu.order, j.id)
	}
	m.mu.jobs[j.id] = j
}

// SubmitSQL runs a Flink SQL script as a new job and returns it.
func (m *Manager) SubmitSQL(req api.JobSubmitRequest) (*Job, error) {
	if strings.TrimSpace(req.Script) == "" {
		return nil, fmt.Errorf("%w: the request has no script", ErrBadJob)
	}
	r := record{ID: newID(), Name: req.Name, Script: req.Script, Settings: req.Settings, Restore: req.SavepointPath}
	return m.startSQL(r, req.SavepointPath)
}

// startSQL plans r's script and starts it, restoring restore.
func (m *Manager) startSQL(r record, restore string) (*Job, error) {
	s := session.New()
	s.Out = discard{}
	for k, v := range m.opts.Config.jobSettings() {
		s.Settings[k] = v
	}
	if err := s.Execute(r.Script); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadJob, err)
	}
	for k, v := range r.Settings {
		if err := s.Set(k, v); err != nil {
			return nil, fmt.Errorf("%w: setting %s: %w", ErrBadJob, k, err)
		}
	}
	name := r.Name
	if name == "" {
		name = "sql-job"
	}
	jg, opts, err := s.Job(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadJob, err)
	}
	r.Name = jg.JobName
	if opts.CheckpointDir != "" {
		opts.CheckpointDir = m.checkpointDir(s.Settings, r)
	}
	r.CheckpointDir = opts.CheckpointDir
	from := "'execution.savepoint.path'"
	if restore != "" {
		opts.Restore, from = restore, "savepointPath"
	}
	if err := RestoreNeedsCheckpointing(opts, from); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadJob, err)
	}
	j, err := m.start(r, jg, opts)
	if err != nil && !errors.Is(err, ErrBadJob) {
		err = fmt.Errorf("%w: %w", ErrBadJob, err) // a submission the job cannot start with
	}
	return j, err
}

// RestoreNeedsCheckpointing refuses a restore of a job that takes no
// checkpoints: such a job runs without checkpoint storage and would start
// empty, silently dropping the state of the checkpoint or savepoint the
// user named (from names where: --restore, 'execution.savepoint.path').
// latest-or-empty asks for nothing in particular: it starts empty.
func RestoreNeedsCheckpointing(opts runtime.Options, from string) error {
	if opts.Restore == "" || opts.Restore == runtime.RestoreLatestOrEmpty || opts.CheckpointDir != "" {
		return nil
	}
	return fmt.Errorf("%s %q: checkpointing is off, so the job would start empty and ignore it; "+
		"turn it on to restore (SET 'execution.checkpointing.interval' = '10 s', or -D execution.checkpointing.interval=10s)",
		from, opts.Restore)
}

// checkpointDir is where job r keeps its checkpoints: <base>/<job id>, as
// Flink, base being the job's execution.checkpointing.dir (or
// state.checkpoints.dir), else Dir/checkpoints.
func (m *Manager) checkpointDir(st session.Settings, r record) string {
	if r.CheckpointDir != "" {
		return r.CheckpointDir
	}
	base := st[keyCheckpoints]
	if base == "" {
		base = st["state.checkpoints.dir"]
	}
	if base == "" {
		dir := m.opts.Dir
		if dir == "" {
			dir = DefaultDir
		}
		base = filepath.Join(dir, "checkpoints")
	}
	return strings.TrimSuffix(base, "/") + "/" + r.ID
}

// SubmitGraph runs a job built by a Go program (or weir run) with opts.
// Such a job is not resumed by a restarted JobManager: its graph lives in
// the program.
func (m *Manager) SubmitGraph(jg *graph.JobGraph, opts runtime.Options) (*Job, error) {
	r := record{ID: newID(), Name: jg.JobName, CheckpointDir: opts.CheckpointDir, Restore: opts.Restore}
	return m.start(r, jg, opts)
}

// start deploys the job.
func (m *Manager) start(r record, jg *graph.JobGraph, opts runtime.Options) (*Job, error) {
	need := maxParallelism(jg)
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: the JobManager is shutting down", ErrBadJob)
	}
	if err := m.checkLocked(r, jg, need); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	j := &Job{id: r.ID, name: jg.JobName, graph: jg, ckDir: opts.CheckpointDir, vertexID: map[string]string{}}
	for _, v := range jg.Vertices {
		j.vertexID[v.Name] = vertexIDOf(v)
	}
	// Reserve the slots before Start, so two submissions at once cannot
	// both take the last ones.
	m.mu.jobs[r.ID] = j
	m.mu.Unlock()

	if opts.Metrics == nil {
		opts.Metrics = metrics.NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = m.opts.Logger
	}
	opts.Logger = opts.Logger.With("jid", r.ID)
	user := opts.Listener
	opts.Listener = func(e runtime.Event) {
		j.listen(e)
		if user != nil {
			user(e)
		}
	}
	now := time.Now()
	j.mu.resumed = r.StartTime != 0 // a stored record, run again after a JobManager restart
	if r.StartTime == 0 {
		r.StartTime = now.UnixMilli()
	}
	j.mu.rec = r
	j.setStateLocked(api.StateRunning, now)
	c, err := runtime.Start(m.ctx, jg, opts)
	if err != nil {
		m.mu.Lock()
		delete(m.mu.jobs, r.ID)
		m.mu.order = slices.DeleteFunc(m.mu.order, func(id string) bool { return id == r.ID })
		m.mu.Unlock()
		return nil, err // runtime's own words: weir run shows them as they are
	}
	j.client, j.reg = c, opts.Metrics
	if gs := opts.Metrics.Jobs(); len(gs) > 0 {
		j.group = gs[len(gs)-1]
	}
	m.add(j, j.record())
	m.persist(j)
	m.wg.Add(1)
	go m.await(j)
	return j, nil
}

// checkLocked refuses a job whose name a running job has (their sinks'
// transactional ids would clash) or for which the slots do not suffice.
// It reads the other jobs' states under Manager.mu: the one lock nesting,
// Manager.mu → Job.mu (docs/lock-order.md).
func (m *Manager) checkLocked(r record, jg *graph.JobGraph, need int) error {
	used := 0
	for _, o := range m.mu.jobs {
		if o.id == r.ID || o.graph == nil || api.Terminal(o.State()) {
			continue
		}
		if o.name == jg.JobName {
			return fmt.Errorf("%w: job %q (%s) is running under the same name; its sinks' transactional ids "+
				"would clash: give this one another name (SET 'pipeline.name')", ErrBadJob, o.name, o.id)
		}
		used += maxParallelism(o.graph)
	}
	if m.slots >= 0 && used+need > m.slots {
		return fmt.Errorf("%w: job %q needs %d slots, %d of %d are free (raise %s)", ErrBadJob, jg.JobName, need, m.slots-used, m.slots, KeySlots)
	}
	return nil
}

// maxParallelism is the number of slots a job takes: with slot sharing,
// its largest vertex parallelism.
func maxParallelism(jg *graph.JobGraph) int {
	n := 1
	for _, v := range jg.Vertices {
		n = max(n, v.Parallelism)
	}
	return n
}

// await records how the job ended.
func (m *Manager) await(j *Job) {
	defer m.wg.Done()
	_, err := j.client.Wait()
	now := time.Now()
	j.mu.Lock()
	switch {
	case j.mu.suspended:
		// The JobManager is closing: the record stays as it was, so the
		// next start resumes the job.
		j.mu.Unlock()
		return
	case j.mu.cancelled:
		j.setStateLocked(api.StateCanceled, now)
	case err != nil:
		j.mu.rec.Exceptions = append([]api.Exception{exceptionOf(err, now, j.graph, false)}, j.mu.rec.Exceptions...)
		j.setStateLocked(api.StateFailed, now)
	default:
		j.setStateLocked(api.StateFinished, now)
	}
	state := j.mu.rec.State
	j.mu.checkpoints.abandon("the job ended ("+state+")", now)
	j.mu.Unlock()
	m.opts.Logger.Info("job ended", "job", j.name, "jid", j.id, "state", state, "err", err)
	m.persist(j)
}

func (m *Manager) persist(j *Job) {
	if err := m.store.put(j.record()); err != nil {
		m.opts.Logger.Error("cannot write the job store: the job's state is not kept across a restart", "jid", j.id, "err", err)
	}
}

// Job returns the job with id.
func (m *Manager) Job(id string) (*Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.mu.jobs[id]
	if !ok || j.client == nil && j.graph != nil { // still starting
		return nil, fmt.Errorf("%w: no job with id %q (weir list shows the jobs)", ErrJobNotFound, id)
	}
	return j, nil
}

// Jobs returns every job, in submission order.
func (m *Manager) Jobs() []*Job {
	m.mu.Lock()
	out := make([]*Job, 0, len(m.mu.order))
	for _, id := range m.mu.order {
		if j := m.mu.jobs[id]; j != nil {
			out = append(out, j)
		}
	}
	m.mu.Unlock()
	sort.SliceStable(out, func(a, b int) bool { return out[a].record().StartTime < out[b].record().StartTime })
	return out
}

// Slots returns the total and the free slots.
func (m *Manager) Slots() (total, free int) {
	used := 0
	for _, j := range m.Jobs() {
		if j.graph != nil && !api.Terminal(j.State()) {
			used += maxParallelism(j.graph)
		}
	}
	return m.slots, m.slots - used
}

// Config returns the JobManager's configuration.
func (m *Manager) Config() Config { return m.opts.Config }

// Cancel cancels the running job id; its state becomes CANCELED.
func (m *Manager) Cancel(id string) error {
	j, err := m.running(id)
	if err != nil {
		return err
	}
	j.mu.Lock()
	if j.mu.cancelled {
		j.mu.Unlock()
		return fmt.Errorf("%w: job %s is being cancelled already", ErrJobNotRunning, id)
	}
	j.mu.cancelled = true
	j.setStateLocked(api.StateCancelling, time.Now())
	j.mu.Unlock()
	j.client.Cancel()
	return nil
}

// running returns job id if it is running.
func (m *Manager) running(id string) (*Job, error) {
	j, err := m.Job(id)
	if err != nil {
		return nil, err
	}
	if st := j.State(); j.client == nil || api.Terminal(st) {
		return nil, fmt.Errorf("%w: job %s is %s", ErrJobNotRunning, id, st)
	}
	return j, nil
}

// Savepoint takes a savepoint of job id into dir (stop: and stops it with
// it, draining with drain) and returns its path.
func (m *Manager) Savepoint(ctx context.Context, id, dir string, stop, drain bool) (string, error) {
	j, err := m.running(id)
	if err != nil {
		return "", err
	}
	if !stop {
		return j.client.TriggerSavepoint(ctx, dir)
	}
	path, err := j.client.StopWithSavepoint(ctx, dir, drain)
	if err == nil {
		j.mu.Lock()
		j.mu.rec.Savepoint = path
		j.mu.Unlock()
	}
	return path, err
}

// Close stops every running job without ending it for good — its record
// stays RUNNING, so the next Open resumes it from its latest checkpoint
// (as a crash would) — waits for them, and releases Dir's lock.
func (m *Manager) Close() {
	m.mu.Lock()
	m.mu.closed = true
	jobs := make([]*Job, 0, len(m.mu.jobs))
	for _, j := range m.mu.jobs {
		jobs = append(jobs, j)
	}
	m.mu.Unlock()
	for _, j := range jobs {
		j.mu.Lock()
		j.mu.suspended = true
		j.mu.Unlock()
	}
	m.stop()
	m.wg.Wait()
	if m.lock != nil {
		if err := m.lock.Release(); err != nil {
			m.opts.Logger.Warn("releasing the JobManager's directory lock", "dir", m.opts.Dir, "err", err)
		}
	}
}

// Wait waits for every job started so far to end.
func (m *Manager) Wait() { m.wg.Wait() }

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b[:])
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
