package jobmanager

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is the JobManager's configuration: Flink's config.yaml keys,
// flattened ("rest: {port: 8081}" and "rest.port: 8081" are the same key).
// Keys of the jobs' own settings (execution.*, state.*, restart-strategy.*,
// parallelism.*, pipeline.*, table.*, s3.*, weir.*) are the defaults of
// every job; a script's SET overrides them.
type Config map[string]string

// Keys of the JobManager itself (see docs/DESIGN.md, "JobManager").
const (
	KeyRestPort        = "rest.port"
	KeyRestBindAddress = "rest.bind-address"
	KeySSLEnabled      = "security.ssl.rest.enabled"
	// KeySSLCertificate and KeySSLKey are PEM files (Flink names a Java
	// keystore security.ssl.rest.keystore; Weir reads PEM).
	KeySSLCertificate = "security.ssl.rest.certificate"
	KeySSLKey         = "security.ssl.rest.key"
	// KeyAuthToken is the bearer token every state-changing request must
	// carry (Authorization: Bearer TOKEN); unset, none is needed (Weir's:
	// Flink has no token).
	KeyAuthToken   = "weir.rest.auth-token"
	KeyWebSubmit   = "web.submit.enable"
	KeyWebCancel   = "web.cancel.enable"
	KeySlots       = "taskmanager.numberOfTaskSlots"
	KeyDir         = "weir.jobmanager.dir"
	keyCheckpoints = "execution.checkpointing.dir"
)

// Defaults of the keys above.
const (
	DefaultRestPort    = 8081
	DefaultBindAddress = "127.0.0.1"
	DefaultSlots       = 32
	DefaultDir         = ".weir/jobmanager"
)

// jobPrefixes are the key prefixes handed to every job's SQL session.
var jobPrefixes = []string{"execution.", "state.", "restart-strategy.", "parallelism.", "pipeline.", "table.", "s3.",
	"weir.source.", "taskmanager.state."}

// EnvProperties names the environment variable whose value overrides
// the configuration file, as Flink's FLINK_PROPERTIES does: YAML in
// config.yaml's shape, typically one "key: value" a line. -D overrides it.
const EnvProperties = "WEIR_PROPERTIES"

// LoadConfig reads the YAML file at path ("" for none) and applies
// overrides, each "key=value" (weir jobmanager -D).
func LoadConfig(path string, overrides []string) (Config, error) {
	return LoadConfigWith(path, "", overrides)
}

// LoadConfigWith is LoadConfig with properties (the value of
// EnvProperties, "" for none) applied between the file and overrides.
func LoadConfigWith(path, properties string, overrides []string) (Config, error) {
	c := Config{}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("jobmanager: config: %w", err)
		}
		if err := addYAML(c, b); err != nil {
			return nil, fmt.Errorf("jobmanager: config %s: %w", path, err)
		}
	}
	if err := addYAML(c, []byte(properties)); err != nil {
		return nil, fmt.Errorf("jobmanager: $%s: %w", EnvProperties, err)
	}
	for _, kv := range overrides {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("jobmanager: -D %q: want key=value", kv)
		}
		c[strings.TrimSpace(k)] = v
	}
	return c, c.validate()
}

// addYAML sets the keys of the YAML document b, nested keys joined
// with dots.
func addYAML(c Config, b []byte) error {
	var tree map[string]any
	if err := yaml.Unmarshal(b, &tree); err != nil {
		return err
	}
	flatten(c, "", tree)
	return nil
}

func flatten(c Config, prefix string, v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			flatten(c, join(prefix, k), x)
		}
	case nil:
		c[prefix] = ""
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = fmt.Sprint(x)
		}
		c[prefix] = strings.Join(parts, ";")
	default:
		c[prefix] = fmt.Sprint(t)
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func (c Config) validate() error {
	var errs []error
	if _, err := c.RestPort(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Int(KeySlots, DefaultSlots); err != nil {
		errs = append(errs, err)
	}
	for _, k := range []string{KeySSLEnabled, KeyWebSubmit, KeyWebCancel} {
		if _, err := c.Bool(k, false); err != nil {
			errs = append(errs, err)
		}
	}
	if on, _ := c.Bool(KeySSLEnabled, false); on && (c[KeySSLCertificate] == "" || c[KeySSLKey] == "") {
		errs = append(errs, fmt.Errorf("jobmanager: config: %s is true: set %s and %s to PEM files", KeySSLEnabled, KeySSLCertificate, KeySSLKey))
	}
	return errors.Join(errs...)
}

// String returns key's value, or def when unset.
func (c Config) String(key, def string) string {
	if v, ok := c[key]; ok && v != "" {
		return v
	}
	return def
}

// Int returns key's value as an int, or def when unset.
func (c Config) Int(key string, def int) (int, error) {
	v, ok := c[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("jobmanager: config %s: %q is not a number", key, v)
	}
	return n, nil
}

// RestPort returns rest.port (default 8081; 0 picks a free port),
// refusing a number that is no TCP port.
func (c Config) RestPort() (int, error) {
	n, err := c.Int(KeyRestPort, DefaultRestPort)
	if err != nil {
		return 0, err
	}
	if err := CheckPort(n); err != nil {
		return 0, fmt.Errorf("jobmanager: config %s: %w", KeyRestPort, err)
	}
	return n, nil
}

// CheckPort refuses a number that is no TCP port: ports are 0..65535,
// 0 asking for any free one.
func CheckPort(n int) error {
	if n < 0 || n > 65535 {
		return fmt.Errorf("%d is not a port (0..65535; 0 picks a free one)", n)
	}
	return nil
}

// Bool returns key's value as a bool, or def when unset.
func (c Config) Bool(key string, def bool) (bool, error) {
	v, ok := c[key]
	if !ok || v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("jobmanager: config %s: %q is not true or false", key, v)
	}
	return b, nil
}

// jobSettings returns the keys every job inherits.
func (c Config) jobSettings() map[string]string {
	out := map[string]string{}
	for k, v := range c {
		for _, p := range jobPrefixes {
			if strings.HasPrefix(k, p) {
				out[k] = v
			}
		}
	}
	return out
}

// Entries lists the configuration as Flink's /jobmanager/config does,
// sorted by key; the auth token's value is hidden.
func (c Config) Entries() [][2]string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][2]string, len(keys))
	for i, k := range keys {
		v := c[k]
		if k == KeyAuthToken || strings.Contains(k, "secret") || strings.Contains(k, "password") {
			v = "******"
		}
		out[i] = [2]string{k, v}
	}
	return out
}
