package checkpointstorage

import (
	"fmt"
	"time"
)

// Options configures a storage. The zero value is usable: every field
// documents its default.
type Options struct {
	// S3 configures s3:// locations; it is ignored for local directories.
	S3 S3Options
	// UploadConcurrency bounds how many state files WriteStates writes at
	// once, over all subtasks sharing the storage (one connection pool,
	// one disk). Default 8.
	UploadConcurrency int
	// Retry is the back-off for transient object-store failures. Default:
	// DefaultRetry. Local directories never retry.
	Retry RetryPolicy
	// OpTimeout bounds one attempt of one object-store request, so that a
	// hung connection fails the attempt instead of the checkpoint waiting
	// for ever. Default 1 min.
	OpTimeout time.Duration
	// LockLease is how long a bucket's lock (Lock) outlives its holder's
	// last renewal, which comes every LockLease/4: a job that crashed on
	// another host blocks the directory this long. Default 1 min. Local
	// directories are locked by the kernel and need no lease.
	LockLease time.Duration
	// Faults is for fault-injection tests (internal/sim) only: Flink has
	// no such option and no configuration sets it. If set, it is called
	// before each object this storage writes or deletes, with op "upload"
	// (a state or shared file), "metadata" (the _metadata that completes a
	// checkpoint), "write" (a file replaced in place: the id counter),
	// "rename" (a checkpoint moved aside; key is its directory) or
	// "delete" (one object; a directory is deleted object by object, each
	// with its own call), and key the object's slash-separated path
	// relative to the storage. An error it returns fails that operation,
	// without retries, as the store's own error would. The lock is not
	// subject to it. Default nil: no call.
	Faults func(op, key string) error
	// sleep waits between retries; tests replace it. Default time.Sleep.
	sleep func(time.Duration)
}

// S3Options are the settings of an S3 (or S3-compatible) location, named
// after Flink's s3.* options. Each unset field falls back to the AWS SDK's
// usual sources: the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_REGION, AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) and ~/.aws. The
// location's query parameters (?endpoint=…&region=…&use_path_style=true)
// take precedence over both.
type S3Options struct {
	// Endpoint is the server's URL, e.g. http://127.0.0.1:19000 (Flink's
	// s3.endpoint). Default: AWS, or AWS_ENDPOINT_URL_S3/AWS_ENDPOINT_URL.
	Endpoint string
	// Region signs the requests. Default: AWS_REGION, else us-east-1.
	Region string
	// AccessKey and SecretKey are static credentials (Flink's
	// s3.access-key and s3.secret-key). Default: the SDK's chain.
	AccessKey, SecretKey string
	// PathStyle addresses buckets as endpoint/bucket instead of
	// bucket.endpoint (Flink's s3.path.style.access), as most
	// S3-compatible servers want. Default false; an endpoint that is an IP
	// address is always addressed by path.
	PathStyle bool
}

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.UploadConcurrency == 0 {
		o.UploadConcurrency = 8
	}
	if o.Retry == (RetryPolicy{}) {
		o.Retry = DefaultRetry
	}
	if o.OpTimeout == 0 {
		o.OpTimeout = time.Minute
	}
	if o.LockLease == 0 {
		o.LockLease = time.Minute
	}
	if o.sleep == nil {
		o.sleep = time.Sleep
	}
}

// Validate reports an unusable configuration.
func (o *Options) Validate() error {
	if o.UploadConcurrency < 1 {
		return fmt.Errorf("checkpointstorage: upload concurrency %d; want at least 1", o.UploadConcurrency)
	}
	if (o.S3.AccessKey == "") != (o.S3.SecretKey == "") {
		return fmt.Errorf("checkpointstorage: s3.access-key and s3.secret-key must be set together")
	}
	return o.Retry.validate()
}
