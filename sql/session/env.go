package session

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

var envRef = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// ExpandEnv replaces ${NAME} with the environment variable NAME, so one
// script runs against different brokers and databases; an unset variable
// is an error that names it.
func ExpandEnv(src string) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(src, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := os.LookupEnv(name)
		if !ok && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("the script uses ${%s}, not set in the environment", strings.Join(missing, "}, ${"))
	}
	return out, nil
}
