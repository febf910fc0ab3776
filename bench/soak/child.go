package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/session"
)

// childArg makes this program run one SQL script as `weir run` does
// (the soak's default when no -weir binary is given, and what the test
// binary does): weir-child run FILE.sql [-q] [--checkpoint-dir D]
// [--restore latest] [-D key=value]...
const childArg = "weir-child"

func childMain(args []string) error {
	if len(args) < 2 || args[0] != "run" {
		return fmt.Errorf("%s: want run FILE.sql [flags]", childArg)
	}
	script, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	s := session.New()
	if err := s.Execute(string(script)); err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	var restore string
	level := slog.LevelInfo
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-q":
			level = slog.LevelWarn
		case (a == "-D" || a == "--checkpoint-dir" || a == "--restore") && i+1 < len(args):
			i++
			switch a {
			case "--restore":
				restore = args[i]
			case "--checkpoint-dir":
				s.Settings["execution.checkpointing.dir"] = args[i]
			default:
				k, v, _ := strings.Cut(args[i], "=")
				if err := s.Set(k, v); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("%s: unknown argument %q", childArg, a)
		}
	}
	jg, opts, err := s.Job(session.JobName(args[1]))
	if err != nil {
		return err
	}
	opts.Restore = restore
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = runtime.Run(ctx, jg, opts)
	if ctx.Err() != nil {
		return nil // stopped
	}
	return err
}
