package checkpointstorage

import (
	"fmt"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// ObjectBucket returns the storage as a gocloud.dev bucket whose keys are
// relative to the storage, e.g. "shared/group/file", for a state backend
// that creates its files in checkpoint storage itself (state/pebble's
// experimental disaggregated state). The files it puts under shared/ are
// collected like any shared file: Retain and GC keep those a checkpoint
// names. Call release when done with it: it does not close the storage.
//
// A directory is opened with gocloud's fileblob, which renames a finished
// temp file into place but does not fsync it: an experimental mode's
// compromise, unlike WriteFiles.
func (s *FS) ObjectBucket() (b *blob.Bucket, release func() error, err error) {
	switch o := s.obj.(type) {
	case bucketObjects:
		return o.b, func() error { return nil }, nil
	case dirObjects:
		b, err := fileblob.OpenBucket(o.dir, &fileblob.Options{CreateDir: true, NoTempDir: true, Metadata: fileblob.MetadataDontWrite})
		if err != nil {
			return nil, nil, err
		}
		return b, b.Close, nil
	}
	return nil, nil, fmt.Errorf("checkpointstorage: %s cannot be opened as a bucket", s.loc)
}
