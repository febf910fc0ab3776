package prom

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/metrics"
)

// The configuration keys of Flink's PrometheusReporter under the reporter
// name "prom", as Flink's documentation configures it.
const (
	KeyFactoryClass = "metrics.reporter.prom.factory.class"
	KeyPort         = "metrics.reporter.prom.port"
	KeyHost         = "metrics.reporter.prom.host"
)

// FactoryClass is Flink's factory class of the reporter, the one value
// KeyFactoryClass takes.
const FactoryClass = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory"

// DefaultPort is Flink's default port, used when only KeyFactoryClass is
// set; DefaultHost the address bound unless KeyHost says otherwise (Flink
// binds every interface; Weir keeps its metrics on the machine).
const (
	DefaultPort = "9249"
	DefaultHost = "127.0.0.1"
)

// Config is where the reporter listens.
type Config struct {
	// Host is the address to bind; Ports a port ("9249") or a range
	// ("9250-9260": the first free one), as Flink's port option.
	Host, Ports string
}

// FromConfig reads the reporter's keys through get. The reporter is off
// (ok false) unless KeyPort or KeyFactoryClass is set.
func FromConfig(get func(key string) (string, bool)) (c Config, ok bool, err error) {
	class, hasClass := get(KeyFactoryClass)
	port, hasPort := get(KeyPort)
	if !hasClass && !hasPort {
		return Config{}, false, nil
	}
	if hasClass && class != FactoryClass {
		return Config{}, false, fmt.Errorf("'%s' = '%s': the only reporter is Prometheus's, '%s'", KeyFactoryClass, class, FactoryClass)
	}
	c = Config{Host: DefaultHost, Ports: DefaultPort}
	if h, ok := get(KeyHost); ok && h != "" {
		c.Host = h
	}
	if hasPort {
		c.Ports = strings.TrimSpace(port)
	}
	if _, _, err := portRange(c.Ports); err != nil {
		return Config{}, false, err
	}
	return c, true, nil
}

// portRange parses "9249" or "9250-9260".
func portRange(s string) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi = lo
	var err2 error
	if isRange {
		hi, err2 = strconv.Atoi(strings.TrimSpace(b))
	}
	if err1 != nil || err2 != nil || lo < 0 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("'%s' = '%s': want a port (9249) or a range (9250-9260) within 0-65535", KeyPort, s)
	}
	return lo, hi, nil
}

// Server serves a registry's metrics on /metrics (and /, as Flink's
// reporter does).
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen binds the first free port of c's range and serves r on it.
func Listen(c Config, r *metrics.Registry) (*Server, error) {
	return ListenCollector(c, NewCollector(r))
}

// ListenCollector binds the first free port of c's range and serves col
// on it.
func ListenCollector(c Config, col *Collector) (*Server, error) {
	lo, hi, err := portRange(c.Ports)
	if err != nil {
		return nil, err
	}
	var errs []error
	for p := lo; p <= hi; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(c.Host, strconv.Itoa(p)))
		if err == nil {
			return serve(ln, CollectorHandler(col)), nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("metrics reporter: no free port in '%s' = '%s' on %s: %w (set another with -D %s=…)",
		KeyPort, c.Ports, c.Host, errors.Join(errs...), KeyPort)
}

func serve(ln net.Listener, h http.Handler) *Server {
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	mux.Handle("/", h)
	s := &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }
