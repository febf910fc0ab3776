package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// job supervises one Weir process (`weir run FILE.sql`): it starts it,
// restarts it with --restore latest whenever it exits, and lets the soak
// kill and pause it. Exits the soak did not cause are counted.
type job struct {
	name     string
	command  []string // e.g. [weir run] or [self weir-child run]
	script   string
	ckDir    string
	settings []string
	env      []string
	logPath  string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	killed   bool // the soak signalled the running process
	stopping bool
	starts   int
	restores int
	// selfExits counts exits the soak did not cause, by exit status.
	selfExits map[string]int
	stopped   chan struct{}
}

func newJob(name string, command []string, script, ckDir, logPath string, env []string, settings ...string) *job {
	return &job{name: name, command: command, script: script, ckDir: ckDir, logPath: logPath, env: env,
		settings: settings, selfExits: map[string]int{}, stopped: make(chan struct{})}
}

// run supervises the job until stop.
func (j *job) run() {
	defer close(j.stopped)
	for {
		done, err := j.start()
		if err != nil {
			j.logf("soak: cannot start %s: %v", j.name, err)
			time.Sleep(time.Second)
			continue
		}
		<-done
		j.mu.Lock()
		stopping, killed := j.stopping, j.killed
		st := j.cmd.ProcessState
		j.killed = false
		j.mu.Unlock()
		if stopping {
			return
		}
		if !killed {
			j.mu.Lock()
			j.selfExits[st.String()]++
			j.mu.Unlock()
			j.logf("soak: %s exited by itself (%s); restarting", j.name, st)
			time.Sleep(500 * time.Millisecond)
		}
	}
}

func (j *job) logf(format string, args ...any) {
	f, err := os.OpenFile(j.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s "+format+"\n", append([]any{time.Now().UTC().Format(time.RFC3339Nano)}, args...)...)
}

// hasCheckpoint reports whether a completed checkpoint exists: only then
// is --restore latest given (a run killed before its first checkpoint
// starts empty, as it must).
func (j *job) hasCheckpoint() bool {
	m, _ := filepath.Glob(filepath.Join(j.ckDir, "*", "chk-*", "_metadata"))
	m2, _ := filepath.Glob(filepath.Join(j.ckDir, "chk-*", "_metadata"))
	return len(m)+len(m2) > 0
}

func (j *job) start() (chan struct{}, error) {
	args := append([]string(nil), j.command[1:]...)
	args = append(args, j.script, "-q", "--checkpoint-dir", j.ckDir)
	restore := j.hasCheckpoint()
	if restore {
		args = append(args, "--restore", "latest")
	}
	for _, s := range j.settings {
		args = append(args, "-D", s)
	}
	logf, err := os.OpenFile(j.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(j.command[0], args...)
	cmd.Env = append(os.Environ(), j.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // no orphan if the soak dies
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stopping {
		logf.Close()
		return nil, errors.New("stopping")
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	j.starts++
	if restore {
		j.restores++
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	j.cmd, j.done = cmd, done
	return done, nil
}

// signal sends sig to the running process's group; a terminating signal
// is marked as the soak's doing.
func (j *job) signal(sig syscall.Signal) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cmd == nil {
		return
	}
	select {
	case <-j.done:
		return // exited; its pid may belong to another process by now
	default:
	}
	if sig == syscall.SIGKILL || sig == syscall.SIGTERM {
		j.killed = true
	}
	_ = syscall.Kill(-j.cmd.Process.Pid, sig)
}

// kill SIGKILLs the job and waits until the supervisor has started it again.
func (j *job) kill() {
	j.mu.Lock()
	done := j.done
	j.mu.Unlock()
	j.signal(syscall.SIGKILL)
	if done != nil {
		<-done
	}
}

// pause stops the job with SIGSTOP for d, then continues it.
func (j *job) pause(d time.Duration) {
	j.signal(syscall.SIGSTOP)
	time.Sleep(d)
	j.signal(syscall.SIGCONT)
}

// stop ends supervision with SIGTERM (a clean stop: open transactions are
// aborted) and waits for the exit, SIGKILL after grace.
func (j *job) stop(grace time.Duration) {
	j.mu.Lock()
	j.stopping = true
	done := j.done
	j.mu.Unlock()
	j.signal(syscall.SIGCONT)
	j.signal(syscall.SIGTERM)
	if done != nil {
		select {
		case <-done:
		case <-time.After(grace):
			j.logf("soak: %s did not stop within %v of SIGTERM; SIGKILL", j.name, grace)
			j.signal(syscall.SIGKILL)
			<-done
		}
	}
	<-j.stopped
}

func (j *job) counts() (starts, restores int, exits map[string]int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	exits = map[string]int{}
	for k, v := range j.selfExits {
		exits[k] = v
	}
	return j.starts, j.restores, exits
}
