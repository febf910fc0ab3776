package pebble

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A backend's directory is removed by Close; a process that is killed
// (SIGKILL, OOM, power) never gets there and leaves its directories in
// state.backend.local-dir, databases of possibly many GB that nothing will
// read again (a restarted job restores from a checkpoint into fresh
// directories). So each directory holds an owner file naming its process
// (pid and start time, which tell a reused pid apart), and the first
// backend a process opens under a local dir removes the directories whose
// owner is gone, as Flink's TaskManager cleans its local state directories
// on start.

const ownerFile = "WEIR-OWNER"

var swept sync.Map // local dirs already swept by this process

// writeOwner marks dir as this process's.
func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(processID(os.Getpid())), 0o644)
}

// processID is "pid starttime", starttime from /proc (empty where there
// is none).
func processID(pid int) string {
	return strconv.Itoa(pid) + " " + startTime(pid)
}

func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// Field 22, counted after the command name's closing parenthesis
	// (the name may hold spaces).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// alive reports whether the process an owner file names still runs.
func alive(owner string) bool {
	pidText, start, _ := strings.Cut(strings.TrimSpace(owner), " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return true // not ours to judge: keep it
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return start == "" || startTime(pid) == "" || startTime(pid) == start
}

// sweepStale removes, once per process and local dir, the backend
// directories under localDir whose owning process is gone.
func sweepStale(localDir string) {
	if _, done := swept.LoadOrStore(localDir, true); done {
		return
	}
	entries, err := os.ReadDir(localDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPrefix) {
			continue
		}
		dir := filepath.Join(localDir, e.Name())
		owner, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if errors.Is(err, fs.ErrNotExist) || err != nil || alive(string(owner)) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			slog.Warn("pebble: removing the directory of a state backend whose process is gone", "dir", dir, "err", err)
			continue
		}
		slog.Info("pebble: removed the directory of a state backend whose process is gone", "dir", dir, "owner", strings.TrimSpace(string(owner)))
	}
}
