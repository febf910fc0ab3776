package checkpointstorage

import (
	"strings"
	"sync"

	"github.com/weirstream/weir/event"
)

// known is what this storage handle has seen stored, so that Retain, run
// after every completed checkpoint, does not stat every file of every
// retained checkpoint again (on S3 a HEAD each: 2.3 s per checkpoint at 4
// retained checkpoints of a few hundred SSTs). Flink's analogue is the
// completed-checkpoint store and shared-state registry a JobManager keeps
// in memory.
//
// It holds the checkpoints whose metadata this handle read and whose
// files it found (Metadata is immutable once written: a conditional put
// never overwrites it), and the files this handle wrote or found, with
// their sizes. Whatever this handle removes or moves it forgets first, so
// the only thing it can be wrong about is a file removed behind its back
// (by hand or by another process): Retain then keeps a checkpoint it
// would have moved aside. It never deletes on the strength of the memo —
// what Retain deletes is decided by the kept checkpoints' references, as
// before — and GC, Latest and MoveAside check afresh, so a restore still
// finds a missing file, and an orphan (a shared file of a checkpoint that
// never completed) is still collected by GC, which lists shared/.
type known struct {
	mu          sync.Mutex
	checkpoints map[event.CheckpointID]Metadata
	files       map[string]int64 // relative path → size
}

func newKnown() *known {
	return &known{checkpoints: map[event.CheckpointID]Metadata{}, files: map[string]int64{}}
}

// checkpoint returns the metadata of checkpoint id when it is known valid
// and every file it names is still known stored.
func (k *known) checkpoint(id event.CheckpointID) (Metadata, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	m, ok := k.checkpoints[id]
	for _, h := range m.Handles {
		if n, stored := k.files[h.Path]; !stored || n != h.Size {
			return Metadata{}, false
		}
	}
	return m, ok
}

// has reports whether the file h names is known stored with h's size.
func (k *known) has(h Handle) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, ok := k.files[h.Path]
	return ok && n == h.Size
}

// stored records a file written or found.
func (k *known) stored(h Handle) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.files[h.Path] = h.Size
}

// valid records a checkpoint whose metadata was read and whose files were
// all found.
func (k *known) valid(m Metadata) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.checkpoints[m.ID] = m
	for _, h := range m.Handles {
		k.files[h.Path] = h.Size
	}
}

// forget drops rel (and, for a directory, everything under it) before it
// is removed or moved. A checkpoint loses its validity with its
// directory's _metadata, and with any file it names (see checkpoint).
func (k *known) forget(rel string, dir bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.files, rel)
	if dir {
		for p := range k.files {
			if strings.HasPrefix(p, rel+"/") {
				delete(k.files, p)
			}
		}
	}
	top, _, _ := strings.Cut(rel, "/")
	if id, ok := parseChkName(top); ok {
		delete(k.checkpoints, id)
	}
}
