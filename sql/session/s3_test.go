package session

import (
	"testing"

	"github.com/weirstream/weir/checkpointstorage"
)

// Flink's s3.* keys and an s3:// checkpoint directory reach the runtime.
func TestS3CheckpointSettings(t *testing.T) {
	st := Settings{
		"execution.checkpointing.interval": "1 s",
		"execution.checkpointing.dir":      "s3://bucket/weir/jobs",
		"s3.endpoint":                      "http://127.0.0.1:19900",
		"s3.access-key":                    "ak",
		"s3.secret-key":                    "sk",
		"s3.path.style.access":             "true",
	}
	o, err := st.RuntimeOptions("job")
	if err != nil {
		t.Fatal(err)
	}
	want := checkpointstorage.S3Options{Endpoint: "http://127.0.0.1:19900", AccessKey: "ak", SecretKey: "sk", PathStyle: true}
	if o.CheckpointDir != "s3://bucket/weir/jobs" || o.CheckpointStorage.S3 != want {
		t.Fatalf("dir %q, S3 %+v; want s3://bucket/weir/jobs, %+v", o.CheckpointDir, o.CheckpointStorage.S3, want)
	}
	delete(st, "s3.secret-key")
	if _, err := st.RuntimeOptions("job"); err == nil {
		t.Fatal("s3.access-key without s3.secret-key accepted")
	}
	st = Settings{"s3.path.style.access": "yes"}
	if _, err := st.RuntimeOptions("job"); err == nil || err.Error() != "SET 's3.path.style.access' = 'yes': want true or false" {
		t.Fatalf("bad bool: %v", err)
	}
}
