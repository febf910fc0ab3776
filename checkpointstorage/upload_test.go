package checkpointstorage

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/weirstream/weir/internal/testsvc"
)

func TestRetryPolicy(t *testing.T) {
	p := RetryPolicy{Attempts: 5, Initial: 100 * time.Millisecond, Max: 300 * time.Millisecond}
	var got []string
	for failed := 1; failed <= 6; failed++ {
		d, ok := p.Next(failed)
		got = append(got, fmt.Sprintf("%d:%v/%v", failed, d, ok))
	}
	want := []string{"1:100ms/true", "2:200ms/true", "3:300ms/true", "4:300ms/true", "5:0s/false", "6:0s/false"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("schedule = %v, want %v", got, want)
	}
	if err := (&Options{Retry: RetryPolicy{Attempts: 0}}).Validate(); err == nil {
		t.Fatal("0 attempts accepted")
	}
}

// faulty wraps a storage's objects and fails puts of keys in failPut.
type faulty struct {
	objects
	mu      sync.Mutex
	failPut map[string]error
	puts    map[string]int
}

func (f *faulty) put(ctx context.Context, key string, data []byte, mode putMode) error {
	f.mu.Lock()
	f.puts[key]++
	err := f.failPut[key]
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.objects.put(ctx, key, data, mode)
}

// A failed upload names the file and how often it was tried: an object
// store retries a transient error by the policy (the sleeps are the
// policy's), a local directory does not; the other files are written.
func TestWriteStatesFailureNamesFile(t *testing.T) {
	attempts := map[string]int{"file": 1, "s3": 3}
	forEachBackend(t, func(t *testing.T, b backend) {
		loc, opts := b.loc(t)
		var slept []time.Duration
		opts.Retry = RetryPolicy{Attempts: 3, Initial: 10 * time.Millisecond, Max: time.Second}
		opts.sleep = func(d time.Duration) { slept = append(slept, d) }
		opts.UploadConcurrency = 1 // sequential, so slept has no race and the order is known
		s := mustOpen(t, loc, opts)
		f := &faulty{objects: s.obj, failPut: map[string]error{"chk-4/map-1-keyed": errors.New("injected: connection reset")}, puts: map[string]int{}}
		s.obj = f
		files := []StateFile{{Name: "map-0-keyed", Data: []byte("a")}, {Name: "map-1-keyed", Data: []byte("b")}, {Name: "map-2-keyed", Data: []byte("c")}}
		_, err := s.WriteStates(4, files)
		var ue *UploadError
		if !errors.As(err, &ue) || ue.Path != s.Where("chk-4/map-1-keyed") || ue.Attempts != attempts[b.name] ||
			!strings.Contains(err.Error(), s.Where("chk-4/map-1-keyed")+": injected: connection reset") {
			t.Fatalf("WriteStates error = %v, want an UploadError for %s after %d attempts", err, s.Where("chk-4/map-1-keyed"), attempts[b.name])
		}
		if want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}[:attempts[b.name]-1]; !reflect.DeepEqual(slept, want) && len(slept)+len(want) > 0 {
			t.Fatalf("slept %v, want %v", slept, want)
		}
		if f.puts["chk-4/map-2-keyed"] != 0 {
			t.Fatalf("an upload started after the failure: %v", f.puts)
		}
		// Parallel: every file lands, handles in the order given.
		s.opts.UploadConcurrency = 3
		s.uploads = make(chan struct{}, 3)
		delete(f.failPut, "chk-4/map-1-keyed")
		hs, err := s.WriteStates(5, files)
		if err != nil || len(hs) != 3 || hs[1].Path != "chk-5/map-1-keyed" {
			t.Fatalf("WriteStates = %v, %v", hs, err)
		}
	})
}

// On S3, a bucket that vanished (or never existed) fails the upload at
// once, naming the file; opening a missing bucket says how to fix it.
func TestS3MissingBucket(t *testing.T) {
	srv := testsvc.S3(t)
	opts := Options{S3: S3Options{Endpoint: srv.Endpoint, Region: srv.Region, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}}
	bucket := fmt.Sprintf("weir-gone-%d", time.Now().UnixNano())
	client := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")})
	ctx := context.Background()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, "s3://"+bucket+"/p", opts)
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	_, err := s.WriteStates(1, []StateFile{{Name: "src-0-offsets", Data: []byte("x")}})
	var ue *UploadError
	if !errors.As(err, &ue) || ue.Path != "s3://"+bucket+"/p/chk-1/src-0-offsets" || ue.Attempts != 1 || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("WriteStates = %v, want an UploadError for s3://%s/p/chk-1/src-0-offsets, NoSuchBucket, 1 attempt", err, bucket)
	}
	_, err = Open("s3://"+bucket+"/p", opts)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("bucket %q does not exist at %s; create it", bucket, srv.Endpoint)) {
		t.Fatalf("Open of a missing bucket = %v", err)
	}
}

// The AWS variables configure S3 when no option does.
func TestS3FromAWSEnvironment(t *testing.T) {
	srv := testsvc.S3(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", srv.Region)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	loc := fmt.Sprintf("s3://%s/test/env-%d", srv.Bucket, time.Now().UnixNano())
	s := mustOpen(t, loc, Options{})
	want := complete(t, s, 1, "a")
	t.Cleanup(func() { _ = s.Discard(1) })
	got, skipped, err := s.Latest()
	if err != nil || len(skipped) != 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("Latest = %+v, %v, %v", got, skipped, err)
	}
}

func TestOpenRefusesBadLocations(t *testing.T) {
	for loc, want := range map[string]string{
		"gs://b/p":                   `unsupported scheme "gs"`,
		"s3:///p":                    "names no bucket",
		"s3://b/p?acl=x":             `unknown parameter "acl"`,
		"s3://b/p?use_path_style=ok": `use_path_style="ok" is not true or false`,
	} {
		if _, err := Open(loc, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want an error containing %q", loc, err, want)
		}
	}
	if _, err := Open("s3://b/p", Options{S3: S3Options{AccessKey: "k"}}); err == nil || !strings.Contains(err.Error(), "s3.secret-key") {
		t.Errorf("access key without secret accepted: %v", err)
	}
}

func TestLocationJoinSplit(t *testing.T) {
	if got := join("s3://b/p?endpoint=http%3A%2F%2Fh%3A1", "chk-7"); got != "s3://b/p/chk-7?endpoint=http%3A%2F%2Fh%3A1" {
		t.Errorf("join = %s", got)
	}
	parent, last, err := split("s3://b/p/chk-7?region=x")
	if err != nil || parent != "s3://b/p?region=x" || last != "chk-7" {
		t.Errorf("split = %s, %s, %v", parent, last, err)
	}
	if !sameLocation("s3://b/p/?region=x", "s3://b/p?region=x") || sameLocation("s3://b/p", "s3://b/q") {
		t.Error("sameLocation")
	}
}

// lostAnswer stores a put of key, then fails it as a connection lost
// before the answer came: the caller cannot tell the PUT landed.
type lostAnswer struct {
	objects
	key  string
	lost int
}

func (l *lostAnswer) put(ctx context.Context, key string, data []byte, mode putMode) error {
	err := l.objects.put(ctx, key, data, mode)
	if err == nil && key == l.key && l.lost == 0 {
		l.lost++
		return errors.New("injected: connection reset before the response")
	}
	return err
}

// An exclusive PUT of _metadata that was stored but whose answer was lost
// is retried; the retry meets the object (412) — this checkpoint's own
// metadata, so the checkpoint is complete, not "exists". Metadata that
// differs still fails as ErrCheckpointExists.
func TestMetadataPutWithLostAnswer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		if b.name != "s3" {
			t.Skip("a local directory does not retry")
		}
		loc, opts := b.loc(t)
		opts.Retry = RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: time.Millisecond}
		s := mustOpen(t, loc, opts)
		la := &lostAnswer{objects: s.obj, key: "chk-3/_metadata"}
		s.obj = la
		m := Metadata{ID: 3}
		if err := s.WriteMetadata(m); err != nil {
			t.Fatalf("WriteMetadata after a lost answer = %v, want success", err)
		}
		if la.lost != 1 {
			t.Fatalf("the answer was lost %d times, want 1", la.lost)
		}
		if got, err := s.ReadMetadata(3); err != nil || got.ID != 3 {
			t.Fatalf("ReadMetadata = %+v, %v", got, err)
		}
		other := m
		other.Final = true
		if err := s.WriteMetadata(other); !errors.Is(err, ErrCheckpointExists) {
			t.Fatalf("WriteMetadata of different metadata = %v, want ErrCheckpointExists", err)
		}
	})
}
