package rest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/rest/api"
)

// The endpoint binds 127.0.0.1 unless rest.bind-address says otherwise.
func TestBindsLoopbackByDefault(t *testing.T) {
	c := newCluster(t)
	host, _, _ := net.SplitHostPort(strings.TrimPrefix(c.ep.URL(), "http://"))
	if host != "127.0.0.1" {
		t.Errorf("default bind address %s, want 127.0.0.1", host)
	}
	c2 := newCluster(t, "rest.bind-address=0.0.0.0")
	host, _, _ = net.SplitHostPort(strings.TrimPrefix(c2.ep.URL(), "http://"))
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		t.Errorf("rest.bind-address=0.0.0.0 bound %s", host)
	}
}

// With weir.rest.auth-token set, every state-changing request needs the
// token: an unauthenticated or wrongly authenticated cancel fails with
// 401 and the job runs on; reads need none; the right token cancels.
func TestAuthTokenGuardsStateChanges(t *testing.T) {
	const token = "s3cret-token"
	c := newCluster(t, "weir.rest.auth-token="+token)
	id := c.submit(endlessJob, nil)
	for _, tok := range []string{"", "wrong"} {
		code, body := c.call("PATCH", "/v1/jobs/"+id+"?mode=cancel", "", tok)
		wantError(t, "cancel with token "+tok, code, body, http.StatusUnauthorized, "needs the JobManager's token")
		code, body = c.call("POST", "/v1/jobs/"+id+"/stop", `{"targetDirectory": "/tmp"}`, tok)
		wantError(t, "stop with token "+tok, code, body, http.StatusUnauthorized, "needs the JobManager's token")
		code, body = c.call("POST", "/v1/jobs", `{"script": "x"}`, tok)
		wantError(t, "submit with token "+tok, code, body, http.StatusUnauthorized, "needs the JobManager's token")
	}
	if st := c.state(id); st != api.StateRunning {
		t.Fatalf("after unauthenticated cancels the job is %s, want RUNNING", st)
	}
	if code, body := c.call("PATCH", "/v1/jobs/"+id+"?mode=cancel", "", token); code != http.StatusAccepted {
		t.Fatalf("cancel with the token: %d %s", code, body)
	}
	waitFor(t, "the job to be CANCELED", func() bool { return c.state(id) == api.StateCanceled })
}

// web.submit.enable: false refuses POST /jobs with 403; /config says so.
func TestSubmitCanBeSwitchedOff(t *testing.T) {
	c := newCluster(t, "web.submit.enable=false")
	code, body := c.call("POST", "/v1/jobs", `{"script": "SELECT 1"}`, "")
	wantError(t, "submit", code, body, http.StatusForbidden, "web.submit.enable")
	code, body = c.call("GET", "/v1/config", "", "")
	if code != http.StatusOK || !strings.Contains(string(body), `"web-submit":false`) {
		t.Errorf("GET /config: %d %s, want web-submit false", code, body)
	}
}

// security.ssl.rest.enabled serves HTTPS with the PEM certificate and key;
// a client trusting the certificate gets answers, plain HTTP does not.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	c := newCluster(t, "security.ssl.rest.enabled=true", "security.ssl.rest.certificate="+certFile,
		"security.ssl.rest.key="+keyFile)
	if !strings.HasPrefix(c.ep.URL(), "https://") {
		t.Fatalf("URL %s, want https", c.ep.URL())
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if code, body := call(t, hc, c.ep.URL(), "GET", "/v1/overview", "", ""); code != http.StatusOK {
		t.Fatalf("GET /v1/overview over TLS: %d %s", code, body)
	}
	plain := "http://" + strings.TrimPrefix(c.ep.URL(), "https://")
	if code, _ := call(t, http.DefaultClient, plain, "GET", "/v1/overview", "", ""); code == http.StatusOK {
		t.Fatal("plain HTTP to the TLS endpoint answered 200")
	}
	if _, err := http.Get(c.ep.URL() + "/v1/overview"); err == nil {
		t.Fatal("a client that does not trust the certificate got an answer")
	}
}

// No path from a request reaches the file system unchecked (Flink's
// CVE-2020-17518/17519): ids must be 32 hex digits, a savepoint or
// restore directory absolute without '..', and nothing is served from
// disk.
func TestNoUncheckedPaths(t *testing.T) {
	c := newCluster(t)
	id := c.submit(endlessJob, nil)
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/v1/jobs/..%252f..%252f..%252fetc%252fpasswd", "", 400, "not a valid id"},
		{"GET", "/v1/jobs/%2e%2e%2f%2e%2e%2fetc%2fpasswd/exceptions", "", 400, "not a valid id"},
		{"GET", "/jobmanager/logs/..%252f..%252f..%252fetc%252fpasswd", "", 404, "Not found"},
		{"GET", "/v1/jobs/" + id + "/vertices/..%2f..%2f/watermarks", "", 400, "not a valid id"},
		{"GET", "/v1/jobs/" + id + "/checkpoints/details/1%2f..%2f/subtasks/" + id, "", 400, "not a checkpoint id"},
		{"POST", "/v1/jobs/" + id + "/savepoints", `{"target-directory": "/tmp/../etc"}`, 400, "'..' element"},
		{"POST", "/v1/jobs/" + id + "/savepoints", `{"target-directory": "relative/dir"}`, 400, "not an absolute path"},
		{"POST", "/v1/jobs/" + id + "/stop", `{"targetDirectory": "/tmp/x/../../etc"}`, 400, "'..' element"},
		{"POST", "/v1/jobs/" + id + "/stop", `{"targetDirectory": "s3://b/../p"}`, 400, "'..' element"},
		{"POST", "/v1/jobs/" + id + "/stop", `{"targetDirectory": "http://evil/p"}`, 400, "want an absolute path"},
		{"POST", "/v1/jobs", `{"script": "x", "savepointPath": "../../sp"}`, 400, "not an absolute path"},
	} {
		code, body := c.call(tc.method, tc.path, tc.body, "")
		wantError(t, tc.method+" "+tc.path+" "+tc.body, code, body, tc.code, tc.want)
	}
	if st := c.state(id); st != api.StateRunning {
		t.Errorf("the job is %s after the refused requests, want RUNNING", st)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "weir test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "rest.crt"), filepath.Join(dir, "rest.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
