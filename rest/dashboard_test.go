package rest

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The dashboard shares the REST server's port without taking a REST path:
// / is its page and /web/ its embedded assets (every one the page loads
// is local: it works offline), with a Content-Security-Policy that allows
// nothing from elsewhere; /web/ lists no directory; unknown paths still
// answer the REST API's JSON 404.
func TestDashboardServed(t *testing.T) {
	c := newCluster(t)
	code, page := c.call("GET", "/", "", "")
	if code != http.StatusOK || !strings.Contains(string(page), "<title>Weir dashboard</title>") {
		t.Fatalf("GET /: %d %.200s", code, page)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) == 0 {
		t.Fatal("the page loads nothing")
	}
	for _, m := range refs {
		ref := m[1]
		if strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "/v1/") {
			continue
		}
		if !strings.HasPrefix(ref, "/web/") {
			t.Errorf("the page loads %q, not an embedded asset", ref)
			continue
		}
		if code, body := c.call("GET", ref, "", ""); code != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s: %d, %d bytes", ref, code, len(body))
		}
	}
	resp, err := http.Get(c.ep.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if code, body := c.call("GET", "/web/vendor/chart.js-LICENSE.md", "", ""); code != http.StatusOK || !strings.Contains(string(body), "MIT") {
		t.Errorf("Chart.js's licence: %d %.100s", code, body)
	}
	if code, _ := c.call("GET", "/web/", "", ""); code != http.StatusNotFound {
		t.Errorf("GET /web/: %d, want 404 (no directory listing)", code)
	}
	code, body := c.call("GET", "/no/such/path", "", "")
	wantError(t, "GET /no/such/path", code, body, http.StatusNotFound, "Not found: /no/such/path")
	if code, _ := c.call("GET", "/v1/overview", "", ""); code != http.StatusOK {
		t.Errorf("GET /v1/overview: %d", code)
	}
}
