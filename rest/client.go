package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Client calls a REST server: weir run's, later the JobManager's.
type Client struct {
	// Base is the server's address, e.g. "http://127.0.0.1:8081".
	Base string
	// HTTP is the client used. Default: http.DefaultClient.
	HTTP *http.Client
	// Poll is how often AwaitSavepoint asks for the status. Default 100 ms.
	Poll time.Duration
}

// Jobs lists the server's jobs.
func (c *Client) Jobs(ctx context.Context) ([]JobStatus, error) {
	var out JobList
	err := c.do(ctx, http.MethodGet, "/jobs", nil, &out)
	return out.Jobs, err
}

// TriggerSavepoint starts a savepoint of job into dir ("": the job's
// default) and returns its trigger id; stop makes it a stop-with-savepoint.
func (c *Client) TriggerSavepoint(ctx context.Context, job, dir string, stop bool) (string, error) {
	var out TriggerResponse
	err := c.do(ctx, http.MethodPost, "/jobs/"+job+"/savepoints", SavepointRequest{TargetDirectory: dir, CancelJob: stop}, &out)
	return out.RequestID, err
}

// Stop starts a stop-with-savepoint of job into dir, draining with drain,
// and returns its trigger id.
func (c *Client) Stop(ctx context.Context, job, dir string, drain bool) (string, error) {
	var out TriggerResponse
	err := c.do(ctx, http.MethodPost, "/jobs/"+job+"/stop", StopRequest{TargetDirectory: dir, Drain: drain}, &out)
	return out.RequestID, err
}

// SavepointStatus returns the status of the savepoint operation trigger.
func (c *Client) SavepointStatus(ctx context.Context, job, trigger string) (SavepointStatus, error) {
	var out SavepointStatus
	err := c.do(ctx, http.MethodGet, "/jobs/"+job+"/savepoints/"+trigger, nil, &out)
	return out, err
}

// AwaitSavepoint polls the operation until it completed and returns the
// savepoint's location, or the failure it reported.
func (c *Client) AwaitSavepoint(ctx context.Context, job, trigger string) (string, error) {
	poll := c.Poll
	if poll == 0 {
		poll = 100 * time.Millisecond
	}
	for {
		st, err := c.SavepointStatus(ctx, job, trigger)
		if err != nil {
			return "", err
		}
		if st.Status.ID == "COMPLETED" && st.Operation != nil {
			if f := st.Operation.FailureCause; f != nil {
				return "", errors.New(f.StackTrace)
			}
			return st.Operation.Location, nil
		}
		select {
		case <-time.After(poll):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+path, &body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("rest: %s %s: %w", method, c.Base+path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("rest: %s %s: %s: %s", method, c.Base+path, resp.Status, strings.Join(e.Errors, "; "))
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
