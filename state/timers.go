package state

// TimerQueues is implemented by a keyed backend that keeps timers itself
// rather than on the Go heap (Flink's PriorityQueueSetFactory, whose
// RocksDB implementation is state.backend.rocksdb.timer-service.factory:
// ROCKSDB). operator.TimerService uses it when the keyed backend has it and
// keeps a heap of its own otherwise.
type TimerQueues interface {
	// TimerQueue returns (creating it on first use) the queue named name.
	// A queue is not a registered state: Keys, Snapshot and Restore of the
	// backend do not see it, and the timer service snapshots and restores
	// its elements itself. Calling it does not count as using the backend
	// for Restore (which may still come after).
	TimerQueue(name string) (TimerQueue, error)
}

// TimerQueue is a set of elements, each in a key group of the backend's
// range, ordered by their bytes (the caller encodes its order into them).
// Like the backend, it is used by the subtask's goroutine only.
type TimerQueue interface {
	// Add inserts elem into key group kg; it reports whether elem was not
	// there yet.
	Add(kg int, elem []byte) bool
	// Remove deletes elem from key group kg; it reports whether it was
	// there.
	Remove(kg int, elem []byte) bool
	// Peek returns the least element of every key group and its key
	// group; ok is false when the queue is empty. elem is valid until the
	// next call on the queue.
	Peek() (kg int, elem []byte, ok bool)
	// Len is the number of elements.
	Len() int
	// Snapshot captures the elements as of now, copying nothing.
	Snapshot() QueueSnapshot
}

// QueueSnapshot is the captured content of a TimerQueue.
type QueueSnapshot interface {
	// Range calls f with every element, by key group then in order, until
	// f returns false. It may run on any goroutine, concurrently with the
	// owner changing the queue; it is called at most once and releases
	// what the snapshot holds. elem is valid only during the call.
	Range(f func(kg int, elem []byte) bool) error
}
