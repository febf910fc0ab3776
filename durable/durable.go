// Package durable writes small files so that a crash leaves either the old
// file or the whole new one: markers, job stores, address files.
package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to a temporary file beside path, fsyncs it,
// renames it into place and fsyncs the directory, so a reader sees all
// of data or the previous file (os.WriteFile creates the file empty
// first), and the file survives a crash once WriteFile returns.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o644) // CreateTemp's 0600, as os.WriteFile's callers had it
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		if rmErr := os.Remove(tmp); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = errors.Join(err, rmErr)
		}
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
