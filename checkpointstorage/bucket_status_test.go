package checkpointstorage

import (
	"errors"
	"fmt"
	"testing"
)

type statusError int

func (e statusError) Error() string {
	return fmt.Sprintf("https response error StatusCode: %d", int(e))
}
func (e statusError) HTTPStatusCode() int { return int(e) }

// A 412 reaches put wrapped (gocloud around the SDK's operation and retry
// errors) and, when its body could not be read, with code Unknown: the
// status is still found.
func TestHTTPStatusThroughWrapping(t *testing.T) {
	err := fmt.Errorf("blob (code=Unknown): %w", fmt.Errorf("operation error S3: PutObject: %w", statusError(412)))
	if got := httpStatus(err); got != 412 {
		t.Errorf("httpStatus = %d, want 412", got)
	}
	if got := httpStatus(errors.New("connection reset")); got != 0 {
		t.Errorf("httpStatus of an error without a response = %d, want 0", got)
	}
}
