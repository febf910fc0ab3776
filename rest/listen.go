package rest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/metrics/prom"
)

// Endpoint is a listening REST server.
type Endpoint struct {
	srv  *http.Server
	ln   net.Listener
	rest *Server
	tls  bool
}

// Listen serves m's REST API as c configures it: on rest.bind-address
// (default 127.0.0.1 — never every interface unless asked), rest.port
// (default 8081; 0 picks a free port), with TLS when
// security.ssl.rest.enabled (PEM files security.ssl.rest.certificate and
// security.ssl.rest.key), a token for state-changing requests when
// weir.rest.auth-token is set, and web.submit.enable / web.cancel.enable.
func Listen(m *jobmanager.Manager, c jobmanager.Config) (*Endpoint, error) {
	opts, err := OptionsFromConfig(c)
	if err != nil {
		return nil, err
	}
	port, err := c.RestPort()
	if err != nil {
		return nil, err
	}
	var tc *tls.Config
	if on, _ := c.Bool(jobmanager.KeySSLEnabled, false); on {
		cert, err := tls.LoadX509KeyPair(c[jobmanager.KeySSLCertificate], c[jobmanager.KeySSLKey])
		if err != nil {
			return nil, fmt.Errorf("rest: %s, %s: %w", jobmanager.KeySSLCertificate, jobmanager.KeySSLKey, err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	addr := net.JoinHostPort(c.String(jobmanager.KeyRestBindAddress, jobmanager.DefaultBindAddress), strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &ListenError{Addr: addr, Err: err}
	}
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	e := &Endpoint{ln: ln, rest: NewServer(m, opts), tls: tc != nil}
	e.srv = &http.Server{Handler: e.rest.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = e.srv.Serve(ln) }() // ends with Close
	return e, nil
}

// URL is the endpoint's base URL, e.g. https://127.0.0.1:8081.
func (e *Endpoint) URL() string {
	scheme := "http"
	if e.tls {
		scheme = "https"
	}
	return scheme + "://" + e.ln.Addr().String()
}

// Collector exports the metrics of the JobManager's running jobs (what
// /metrics serves), for a Prometheus reporter on a port of its own.
func (e *Endpoint) Collector() *prom.Collector { return e.rest.Collector() }

// AwaitFetched waits, at most until ctx ends, for clients to fetch the
// results of the savepoint operations they started (Server.AwaitFetched).
func (e *Endpoint) AwaitFetched(ctx context.Context) { e.rest.AwaitFetched(ctx) }

// closeGrace bounds how long Close lets requests in flight finish.
const closeGrace = 2 * time.Second

// Close stops serving. Requests in flight get their answers first (for
// up to closeGrace): the client that fetched a stopped job's savepoint
// must read the reply, not a closed connection.
func (e *Endpoint) Close() error {
	e.rest.Close()
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		return e.srv.Close()
	}
	return nil
}

// ListenError is Listen's failure to listen on Addr; its message names the
// options that choose the address (a command with flags of its own for
// them names those instead, from Addr and Err).
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("rest: listen on %s: %v (set %s or %s)", e.Addr, e.Err, jobmanager.KeyRestPort, jobmanager.KeyRestBindAddress)
}

func (e *ListenError) Unwrap() error { return e.Err }
