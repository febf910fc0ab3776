package rest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/weirstream/weir/rest/api"
)

// ExplainAnalyze is GET /jobs/:jobid/explain-analyze.
func (c *Client) ExplainAnalyze(ctx context.Context, job string) (api.ExplainAnalyze, error) {
	var out api.ExplainAnalyze
	err := c.Do(ctx, "GET", "/v1/jobs/"+url.PathEscape(job)+"/explain-analyze", nil, &out)
	return out, err
}

// HotSubtasks is GET /jobs/:jobid/hot-subtasks?by=&n=.
func (c *Client) HotSubtasks(ctx context.Context, job, by string, n int) (api.HotSubtasks, error) {
	var out api.HotSubtasks
	q := url.Values{"by": {by}, "n": {fmt.Sprint(n)}}
	err := c.Do(ctx, "GET", "/v1/jobs/"+url.PathEscape(job)+"/hot-subtasks?"+q.Encode(), nil, &out)
	return out, err
}

// Tail is GET /jobs/:jobid/vertices/:vertexid/tail?rate=&limit= (0: the
// server's default): it calls f with every event until the stream ends
// (its last stats event says why), ctx is done or f fails.
func (c *Client) Tail(ctx context.Context, job, vertex string, rate, limit int, f func(api.TailEvent) error) error {
	q := url.Values{}
	if rate > 0 {
		q.Set("rate", fmt.Sprint(rate))
	}
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	resp, err := c.send(ctx, "GET", "/v1/jobs/"+url.PathEscape(job)+"/vertices/"+url.PathEscape(vertex)+"/tail?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue // the blank line between events
		}
		var e api.TailEvent
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return fmt.Errorf("rest: tail of %s/%s: an event is not JSON: %w", job, vertex, err)
		}
		if err := f(e); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return sc.Err()
}
