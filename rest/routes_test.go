package rest

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Every route of the router has a contract test: the contract tests
// (TestContract*) record each route they got a success from, and once the
// package's tests ran, TestMain fails naming every route of the routes
// table none of them exercised. The check needs them all: it is left out
// when -run selects tests, with -short, or when a contract test was
// skipped (its services missing) or failed (it may have stopped early).

// contractCalls is what the contract tests exercised.
var contractCalls struct {
	sync.Mutex
	hit map[string]bool // route pattern ("GET /jobs/{jobid}") → seen
	// ran: each contract test that made a cluster, and whether it
	// completed (neither skipped nor failed).
	ran map[string]bool
}

// routeMux maps a request to its route's pattern, for recordCall.
var routeMux = func() *http.ServeMux {
	mux := http.NewServeMux()
	for _, r := range routes {
		nop := func(http.ResponseWriter, *http.Request) {}
		mux.HandleFunc(r.method+" "+r.path, nop)
		mux.HandleFunc(r.method+" /v1"+r.path, nop)
	}
	return mux
}()

// routeKey names a route as the routes table does.
func routeKey(method, path string) string { return method + " " + path }

// recordCall notes the route of a successful request a contract test made.
func recordCall(t testing.TB, req *http.Request, code int) {
	if !strings.HasPrefix(t.Name(), "TestContract") || code >= 400 {
		return
	}
	_, pattern := routeMux.Handler(req)
	if pattern == "" {
		return
	}
	method, path, _ := strings.Cut(pattern, " ")
	contractCalls.Lock()
	defer contractCalls.Unlock()
	if contractCalls.hit == nil {
		contractCalls.hit = map[string]bool{}
	}
	contractCalls.hit[routeKey(method, strings.TrimPrefix(path, "/v1"))] = true
}

// recordContractTest notes, when t ends, whether a contract test completed.
func recordContractTest(t *testing.T) {
	if !strings.HasPrefix(t.Name(), "TestContract") {
		return
	}
	name := strings.SplitN(t.Name(), "/", 2)[0]
	t.Cleanup(func() {
		contractCalls.Lock()
		defer contractCalls.Unlock()
		if contractCalls.ran == nil {
			contractCalls.ran = map[string]bool{}
		}
		done, seen := contractCalls.ran[name]
		contractCalls.ran[name] = (!seen || done) && !t.Skipped() && !t.Failed()
	})
}

// uncoveredRoutes are the routes no contract test exercised; ok is false
// when the check does not apply (see above), with the reason.
func uncoveredRoutes(runFilter string, short bool) (missing []string, ok bool, why string) {
	contractCalls.Lock()
	defer contractCalls.Unlock()
	switch {
	case runFilter != "" || short:
		return nil, false, "-run or -short selects tests"
	case len(contractCalls.ran) == 0:
		return nil, false, "no contract test ran"
	}
	for name, done := range contractCalls.ran {
		if !done {
			return nil, false, name + " was skipped or failed"
		}
	}
	for _, r := range routes {
		if !contractCalls.hit[routeKey(r.method, r.path)] {
			missing = append(missing, routeKey(r.method, r.path))
		}
	}
	sort.Strings(missing)
	return missing, true, ""
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		code = checkRouteCoverage()
	}
	os.Exit(code)
}

// checkRouteCoverage reports the routes without a contract test; 1 if any.
func checkRouteCoverage() int {
	run := ""
	if f := flag.Lookup("test.run"); f != nil {
		run = f.Value.String()
	}
	missing, ok, why := uncoveredRoutes(run, testing.Short())
	if !ok {
		if testing.Verbose() {
			fmt.Println("route coverage of the contract tests not checked:", why)
		}
		return 0
	}
	if len(missing) == 0 {
		return 0
	}
	fmt.Printf("FAIL: %d REST routes have no contract test (no TestContract* test got a success from them):\n\t%s\n",
		len(missing), strings.Join(missing, "\n\t"))
	return 1
}

// client is a REST client of the cluster whose requests count for the
// route coverage (see recordCall).
func (c *cluster) client(token string) *Client {
	return &Client{Base: c.ep.URL(), Token: token, HTTP: &http.Client{Transport: routeRecorder{c.t}}}
}

// routeRecorder passes requests on and records their routes.
type routeRecorder struct{ t *testing.T }

func (r routeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		recordCall(r.t, req, resp.StatusCode)
	}
	return resp, err
}
