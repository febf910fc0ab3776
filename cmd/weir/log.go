package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// logConfig is how every weir command logs: one slog handler, text or
// JSON, for the job's lines, the subtasks' (with job, vertex and subtask
// attributes), the connectors' and the Kafka client's. Set by the root
// command's --log-format and --log-level before any command runs.
type logConfig struct {
	format, level string
}

// logs is the process's logging, as the flags set it.
var logs = logConfig{format: "text", level: "info"}

func (c *logConfig) addFlags(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVar(&c.format, "log-format", c.format, "log format: text (key=value) or json (one object a line)")
	fl.StringVar(&c.level, "log-level", c.level, "lowest level logged: debug, info, warn or error (debug includes the Kafka client's lines)")
}

// check validates the flags and makes the process's default logger (what
// libraries log to when given none) write in their format.
func (c *logConfig) check() error {
	if c.format != "text" && c.format != "json" {
		return fmt.Errorf("--log-format %q: want text or json", c.format)
	}
	if _, err := c.slogLevel(); err != nil {
		return err
	}
	slog.SetDefault(slog.New(c.handler(os.Stderr, false)))
	return nil
}

func (c *logConfig) slogLevel() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(c.level))); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.level)
	}
	return l, nil
}

// handler writes to w; quiet (weir run -q) raises the level to warn.
func (c *logConfig) handler(w io.Writer, quiet bool) slog.Handler {
	level, err := c.slogLevel()
	if err != nil {
		level = slog.LevelInfo // check refused it before any command ran
	}
	if quiet {
		level = max(level, slog.LevelWarn)
	}
	o := &slog.HandlerOptions{Level: level}
	if c.format == "json" {
		return slog.NewJSONHandler(w, o)
	}
	return slog.NewTextHandler(w, o)
}

func logger(quiet bool) *slog.Logger { return slog.New(logHandler(os.Stderr, quiet)) }

func logHandler(w io.Writer, quiet bool) slog.Handler { return logs.handler(w, quiet) }
