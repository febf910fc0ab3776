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

	"github.com/weirstream/weir/rest/api"
)

// Client calls a REST server: weir run's or a JobManager's.
type Client struct {
	// Base is the server's address, e.g. "http://127.0.0.1:8081".
	Base string
	// Token is sent as "Authorization: Bearer Token" when set.
	Token string
	// HTTP is the client used. Default: http.DefaultClient.
	HTTP *http.Client
	// Poll is how often AwaitSavepoint asks for the status. Default 100 ms.
	Poll time.Duration
}

// StatusError is a reply with an error status and Flink's error body.
type StatusError struct {
	Method, URL string
	Code        int
	Errors      []string
}

// Error names the request and the reply: "rest: METHOD URL: code status:
// errors", the server's errors joined by "; ".
func (e *StatusError) Error() string {
	return fmt.Sprintf("rest: %s %s: %d %s: %s", e.Method, e.URL, e.Code, http.StatusText(e.Code), strings.Join(e.Errors, "; "))
}

// Jobs lists the server's jobs.
func (c *Client) Jobs(ctx context.Context) ([]api.JobIDStatus, error) {
	var out api.JobIDsWithStatus
	err := c.Do(ctx, http.MethodGet, "/v1/jobs", nil, &out)
	return out.Jobs, err
}

// JobsOverview lists the server's jobs with names, states and times.
func (c *Client) JobsOverview(ctx context.Context) ([]api.JobOverview, error) {
	var out api.MultipleJobsDetails
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/overview", nil, &out)
	return out.Jobs, err
}

// Submit submits a SQL job and returns its id.
func (c *Client) Submit(ctx context.Context, req api.JobSubmitRequest) (string, error) {
	var out api.JobSubmitResponse
	err := c.Do(ctx, http.MethodPost, "/v1/jobs", req, &out)
	return out.JID, err
}

// Cancel cancels job.
func (c *Client) Cancel(ctx context.Context, job string) error {
	return c.Do(ctx, http.MethodPatch, "/v1/jobs/"+job+"?mode=cancel", nil, &struct{}{})
}

// Checkpoints returns job's checkpoint statistics.
func (c *Client) Checkpoints(ctx context.Context, job string) (api.CheckpointingStatistics, error) {
	var out api.CheckpointingStatistics
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+job+"/checkpoints", nil, &out)
	return out, err
}

// TriggerSavepoint starts a savepoint of job into dir ("": the job's
// default) and returns its trigger id; stop makes it a stop-with-savepoint.
func (c *Client) TriggerSavepoint(ctx context.Context, job, dir string, stop bool) (string, error) {
	var out api.TriggerResponse
	err := c.Do(ctx, http.MethodPost, "/v1/jobs/"+job+"/savepoints", api.SavepointTriggerRequest{TargetDirectory: dir, CancelJob: stop}, &out)
	return out.RequestID, err
}

// Stop starts a stop-with-savepoint of job into dir, draining with drain,
// and returns its trigger id.
func (c *Client) Stop(ctx context.Context, job, dir string, drain bool) (string, error) {
	var out api.TriggerResponse
	err := c.Do(ctx, http.MethodPost, "/v1/jobs/"+job+"/stop", api.StopRequest{TargetDirectory: dir, Drain: drain}, &out)
	return out.RequestID, err
}

// SavepointStatus returns the status of the savepoint operation trigger.
func (c *Client) SavepointStatus(ctx context.Context, job, trigger string) (api.SavepointStatus, error) {
	var out api.SavepointStatus
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+job+"/savepoints/"+trigger, nil, &out)
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

// Do sends a request with in as its JSON body (nil: none) and decodes the
// reply into out; an error status is a *StatusError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// send sends a request with in as its JSON body (nil: none) and returns
// the reply of a success status for the caller to read and close; an
// error status is a *StatusError.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return nil, err
		}
	}
	url := strings.TrimSuffix(c.Base, "/") + path
	req, err := http.NewRequestWithContext(ctx, method, url, &body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("rest: %s %s: %w", method, url, err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		e := &StatusError{Method: method, URL: url, Code: resp.StatusCode}
		var body api.ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&body)
		e.Errors = body.Errors
		return nil, e
	}
	return resp, nil
}
