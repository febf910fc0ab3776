package pebble

// WithoutCompactions runs f with automatic compactions off in the
// databases it opens, so that a test sees each flush's SST unchanged.
func WithoutCompactions(f func()) {
	noCompactions.Store(true)
	defer noCompactions.Store(false)
	f()
}
