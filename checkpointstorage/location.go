package checkpointstorage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// IsURL reports whether a checkpoint location is a URL (scheme://…)
// rather than a plain path.
func IsURL(loc string) bool {
	i := strings.Index(loc, "://")
	return i > 0 && !strings.ContainsAny(loc[:i], `/\.`)
}

// LocalPath returns the directory of a plain path or file:// location, and
// false for a bucket (s3://…).
func LocalPath(loc string) (string, bool) { return localPath(loc) }

// localPath returns the directory of a plain path or file:// location.
func localPath(loc string) (string, bool) {
	if !IsURL(loc) {
		return loc, true
	}
	if p, ok := strings.CutPrefix(loc, "file://"); ok {
		return p, true
	}
	return "", false
}

// open opens the storage at loc: a plain path or file:// URL (a local
// directory, created when create is set) or s3://bucket/prefix.
func open(loc string, opts Options, create bool) (*FS, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if loc == "" {
		return nil, errors.New("checkpointstorage: empty directory name; set the checkpoint directory (execution.checkpointing.dir)")
	}
	if dir, ok := localPath(loc); ok {
		if create {
			if err := mkdirSynced(filepath.Clean(dir)); err != nil {
				return nil, fmt.Errorf("checkpointstorage: creating checkpoint directory: %w", err)
			}
		}
		return newFS(loc, dirObjects{dir: dir}, opts), nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("checkpointstorage: checkpoint location %q: %w", loc, err)
	}
	if u.Scheme != "s3" && u.Scheme != "s3a" {
		return nil, fmt.Errorf("checkpointstorage: checkpoint location %q: unsupported scheme %q; use s3://bucket/prefix, file:///path or a plain path", loc, u.Scheme)
	}
	s3loc, err := parseS3(u)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.OpTimeout)
	defer cancel()
	obj, err := openS3(ctx, s3loc, opts.S3)
	if err != nil {
		return nil, err
	}
	return newFS(loc, obj, opts), nil
}

// join appends slash-separated elems to a location: a path join for a
// plain path, the URL's path for a URL (its query kept).
func join(loc string, elems ...string) string {
	if !IsURL(loc) {
		return filepath.Join(append([]string{loc}, elems...)...)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return loc + "/" + path.Join(elems...)
	}
	u.Path = path.Join(append([]string{"/", u.Path}, elems...)...)
	return u.String()
}

// split cuts a URL location into its parent and its last path element.
func split(loc string) (parent, last string, err error) {
	u, err := url.Parse(loc)
	if err != nil {
		return "", "", fmt.Errorf("checkpointstorage: checkpoint location %q: %w", loc, err)
	}
	p := strings.TrimSuffix(u.Path, "/")
	u.Path = path.Dir(p)
	if u.Path == "/" || u.Path == "." {
		u.Path = ""
	}
	return u.String(), path.Base(p), nil
}
