package pebble

// WithoutCompactions runs f with automatic compactions off in the
// databases it opens, so that a test sees each flush's SST unchanged.
func WithoutCompactions(f func()) {
	noCompactions.Store(true)
	defer noCompactions.Store(false)
	f()
}

// OpenCompactions returns how many compactions ended while the database
// of b's incremental restore was being opened.
func OpenCompactions(b *Backend) int64 { return b.restoreStats.open.compacted.Load() }

// L0Tables returns how many SSTs the database of b holds in L0.
func L0Tables(b *Backend) int64 { return b.db.Metrics().Levels[0].TablesCount }
