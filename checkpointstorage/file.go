package checkpointstorage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFileSync creates (or truncates) name, writes data and fsyncs it.
func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// writeFileAtomic puts data at dir/name so that a crash leaves either the
// old state or the new, never a mix: write a temp file in the same
// directory, fsync it, move it into place, fsync the directory. With
// exclusive, an existing dir/name is kept and errExists returned: the temp
// file is hard-linked into place (link(2) fails when the target exists),
// falling back to a check and a rename on a filesystem without hard links.
func writeFileAtomic(dir, name string, data []byte, exclusive bool) error {
	f, err := os.CreateTemp(dir, name+tmpInfix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = place(tmp, filepath.Join(dir, name), exclusive)
	}
	if rmErr := os.Remove(tmp); err == nil && rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		err = rmErr
	}
	if err != nil {
		return err
	}
	return syncDir(dir)
}

// place moves the temp file tmp to dst (see writeFileAtomic).
func place(tmp, dst string, exclusive bool) error {
	if !exclusive {
		return os.Rename(tmp, dst)
	}
	err := os.Link(tmp, dst)
	if errors.Is(err, fs.ErrExist) {
		return errExists
	}
	if err == nil {
		return nil
	}
	if _, statErr := os.Lstat(dst); statErr == nil {
		return errExists
	}
	return os.Rename(tmp, dst)
}

// syncDir fsyncs a directory so that entries created, renamed or removed in
// it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
