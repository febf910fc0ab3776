package jobmanager

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// config.yaml in Flink's shape, nested or flat keys alike, -D overrides;
// the jobs inherit their keys only; bad values name the key.
func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	err := os.WriteFile(path, []byte(`
rest:
  port: 9091
  bind-address: 0.0.0.0
execution.checkpointing:
  interval: 10 s
state.checkpoints.num-retained: 3
restart-strategy:
  type: fixed-delay
  fixed-delay.attempts: 5
weir.rest.auth-token: hush
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path, []string{"rest.port=9092", "parallelism.default=4"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{"rest.port": "9092", "rest.bind-address": "0.0.0.0", "execution.checkpointing.interval": "10 s",
		"state.checkpoints.num-retained": "3", "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "5",
		"weir.rest.auth-token": "hush", "parallelism.default": "4"}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("config %v\nwant %v", c, want)
	}
	jobs := c.jobSettings()
	if len(jobs) != 5 || jobs["rest.port"] != "" || jobs["weir.rest.auth-token"] != "" || jobs["parallelism.default"] != "4" {
		t.Errorf("job settings %v", jobs)
	}
	for _, e := range c.Entries() {
		if e[0] == KeyAuthToken && e[1] != "******" {
			t.Errorf("Entries shows the token: %v", e)
		}
	}
	for _, tc := range []struct{ kv, want string }{
		{"rest.port=http", `rest.port: "http" is not a number`},
		{"rest.port=99999", "rest.port: 99999 is not a port (0..65535; 0 picks a free one)"},
		{"rest.port=-1", "rest.port: -1 is not a port (0..65535; 0 picks a free one)"},
		{"security.ssl.rest.enabled=yes please", `security.ssl.rest.enabled: "yes please" is not true or false`},
		{"security.ssl.rest.enabled=true", "set security.ssl.rest.certificate and security.ssl.rest.key"},
		{"novalue", "want key=value"},
	} {
		if _, err := LoadConfig("", []string{tc.kv}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-D %s: %v, want %q", tc.kv, err, tc.want)
		}
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil {
		t.Error("a missing config file loaded")
	}
}

// $WEIR_PROPERTIES (Flink's FLINK_PROPERTIES) overrides the file and -D
// overrides it; a value that is not YAML fails naming the variable.
func TestConfigFromEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("rest.port: 9091\nparallelism.default: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	props := "rest.port: 9092\nstate.backend.type: pebble\nexecution.checkpointing:\n  interval: 5 s\n"
	c, err := LoadConfigWith(path, props, []string{"state.backend.type=hashmap"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{"rest.port": "9092", "parallelism.default": "2", "state.backend.type": "hashmap", "execution.checkpointing.interval": "5 s"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("config %v\nwant %v", c, want)
	}
	if _, err := LoadConfigWith("", "rest.port: [unclosed", nil); err == nil || !strings.Contains(err.Error(), "$"+EnvProperties) {
		t.Errorf("bad $%s: %v, want an error naming it", EnvProperties, err)
	}
}
