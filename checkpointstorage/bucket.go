package checkpointstorage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
)

// bucketObjects keeps files as objects of a gocloud.dev bucket, under a
// key prefix. An object store has no rename: a PUT is atomic on its own
// (readers see the old object or the new), and putExclusive is a
// conditional PUT (If-None-Match: *).
type bucketObjects struct {
	b *blob.Bucket
	// name is the location without its query, e.g. "s3://bucket/prefix".
	name string
	// client, bucket and prefix reach the bucket directly, for the
	// conditional PUTs (If-Match) of the lock's lease that gocloud lacks.
	client         *s3.Client
	bucket, prefix string
}

func (o bucketObjects) where(key string) string { return o.name + "/" + key }

func (o bucketObjects) close() error { return o.b.Close() }

func (o bucketObjects) retryable(err error) bool {
	if errors.Is(err, errExists) {
		return false // an answer: the key exists
	}
	switch gcerrors.Code(err) {
	case gcerrors.Unknown, gcerrors.Internal, gcerrors.ResourceExhausted, gcerrors.DeadlineExceeded:
		return !errors.Is(err, context.Canceled)
	}
	return false
}

func (o bucketObjects) put(ctx context.Context, key string, data []byte, mode putMode) error {
	opts := &blob.WriterOptions{ContentType: "application/octet-stream", IfNotExist: mode == putExclusive}
	err := o.b.WriteAll(ctx, key, data, opts)
	if mode == putExclusive && (gcerrors.Code(err) == gcerrors.FailedPrecondition || httpStatus(err) == 412) {
		return errExists
	}
	return err
}

// httpStatus is the HTTP status of the response err came from, or 0. A 412
// whose body the SDK failed to read (the connection closed under it) is
// code Unknown to gocloud, though the status alone says the key exists.
func httpStatus(err error) int {
	var r interface{ HTTPStatusCode() int }
	if errors.As(err, &r) {
		return r.HTTPStatusCode()
	}
	return 0
}

func (o bucketObjects) get(ctx context.Context, key string) ([]byte, error) {
	b, err := o.b.ReadAll(ctx, key)
	return b, notExist(err)
}

func (o bucketObjects) size(ctx context.Context, key string) (int64, error) {
	a, err := o.b.Attributes(ctx, key)
	if err != nil {
		return 0, notExist(err)
	}
	return a.Size, nil
}

func (o bucketObjects) list(ctx context.Context, dir string) ([]entry, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	it := o.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	var out []entry
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, notExist(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(obj.Key, prefix), "/")
		out = append(out, entry{name: name, dir: obj.IsDir})
	}
}

func (o bucketObjects) remove(ctx context.Context, key string, dir bool) error {
	if !dir {
		return ignoreNotFound(o.b.Delete(ctx, key))
	}
	prefix := key + "/"
	if key == "" {
		prefix = ""
	}
	it := o.b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ignoreNotFound(o.b.Delete(ctx, obj.Key)); err != nil {
			return err
		}
	}
}

func (o bucketObjects) exists(ctx context.Context, key string) (bool, error) {
	if ok, err := o.b.Exists(ctx, key); err != nil || ok {
		return ok, err
	}
	es, err := o.list(ctx, key)
	return len(es) > 0, err
}

func (o bucketObjects) rename(ctx context.Context, from, to string) error {
	var keys []string
	it := o.b.List(&blob.ListOptions{Prefix: from + "/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		keys = append(keys, obj.Key)
	}
	for _, k := range keys {
		if err := o.b.Copy(ctx, to+strings.TrimPrefix(k, from), k, nil); err != nil {
			return err
		}
	}
	// _metadata first: from then reads as never completed, not as valid.
	slices.SortStableFunc(keys, func(a, b string) int {
		return cmpBool(strings.HasSuffix(b, "/"+metadataName), strings.HasSuffix(a, "/"+metadataName))
	})
	for _, k := range keys {
		if err := ignoreNotFound(o.b.Delete(ctx, k)); err != nil {
			return err
		}
	}
	return nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func ignoreNotFound(err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil
	}
	return err
}

// notExist makes a gocloud NotFound match fs.ErrNotExist too.
func notExist(err error) error {
	if err != nil && gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return err
}

// s3Location is a parsed s3://bucket/prefix?endpoint=…&region=…&use_path_style=….
type s3Location struct {
	bucket, prefix string
	query          url.Values
}

// s3Params are the query parameters an s3:// location may carry.
var s3Params = []string{"endpoint", "region", "use_path_style"}

func parseS3(u *url.URL) (s3Location, error) {
	if u.Host == "" {
		return s3Location{}, fmt.Errorf("checkpointstorage: %q names no bucket; want s3://bucket/prefix", u.Redacted())
	}
	q := u.Query()
	for k := range q {
		if !containsString(s3Params, k) {
			return s3Location{}, fmt.Errorf("checkpointstorage: %q: unknown parameter %q (known: %s; credentials come from s3.access-key/s3.secret-key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)",
				u.Redacted(), k, strings.Join(s3Params, ", "))
		}
	}
	if v := q.Get("use_path_style"); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			return s3Location{}, fmt.Errorf("checkpointstorage: %q: use_path_style=%q is not true or false", u.Redacted(), v)
		}
	}
	return s3Location{bucket: u.Host, prefix: strings.Trim(u.Path, "/"), query: q}, nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// openS3 connects to the bucket of loc, with settings from loc's query,
// then o, then the AWS SDK's environment and files, and checks that the
// bucket is there.
func openS3(ctx context.Context, loc s3Location, o S3Options) (bucketObjects, error) {
	endpoint := firstNonEmpty(loc.query.Get("endpoint"), o.Endpoint)
	region := firstNonEmpty(loc.query.Get("region"), o.Region)
	pathStyle := o.PathStyle
	if v := loc.query.Get("use_path_style"); v != "" {
		pathStyle, _ = strconv.ParseBool(v)
	}
	var cfgOpts []func(*awsconfig.LoadOptions) error
	if region != "" {
		cfgOpts = append(cfgOpts, awsconfig.WithRegion(region))
	}
	if o.AccessKey != "" {
		cfgOpts = append(cfgOpts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.AccessKey, o.SecretKey, "")))
	}
	// Retries are RetryPolicy's, so that an error says how often it was tried.
	cfgOpts = append(cfgOpts, awsconfig.WithRetryMaxAttempts(1))
	cfg, err := awsconfig.LoadDefaultConfig(ctx, cfgOpts...)
	if err != nil {
		return bucketObjects{}, fmt.Errorf("checkpointstorage: loading AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // S3-compatible servers ignore it, but requests must be signed with one
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if endpoint != "" {
			so.BaseEndpoint = aws.String(endpoint)
		}
		so.UsePathStyle = pathStyle
	})
	b, err := s3blob.OpenBucket(ctx, client, loc.bucket, &s3blob.Options{RequestChecksumCalculation: cfg.RequestChecksumCalculation})
	if err != nil {
		return bucketObjects{}, fmt.Errorf("checkpointstorage: opening bucket %s: %w", loc.bucket, err)
	}
	obj := bucketObjects{b: b, name: "s3://" + loc.bucket, client: client, bucket: loc.bucket}
	if loc.prefix != "" {
		obj.b = blob.PrefixedBucket(b, loc.prefix+"/")
		obj.name += "/" + loc.prefix
		obj.prefix = loc.prefix + "/"
	}
	return obj, checkBucket(ctx, obj, loc.bucket, endpoint)
}

// checkBucket fails early, with the fix, when the bucket is missing or the
// credentials do not reach it: otherwise every checkpoint would decline.
func checkBucket(ctx context.Context, obj bucketObjects, bucket, endpoint string) error {
	ok, err := obj.b.IsAccessible(ctx)
	if err == nil && ok {
		return nil
	}
	_ = obj.close()
	at := "AWS S3"
	if endpoint != "" {
		at = endpoint
	}
	if err == nil {
		return fmt.Errorf("checkpointstorage: bucket %q does not exist at %s; create it, or fix the endpoint (s3.endpoint, AWS_ENDPOINT_URL_S3)", bucket, at)
	}
	return fmt.Errorf("checkpointstorage: bucket %q at %s is not accessible (check s3.endpoint/AWS_ENDPOINT_URL_S3 and the credentials, s3.access-key/AWS_ACCESS_KEY_ID): %w", bucket, at, err)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
