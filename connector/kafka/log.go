package kafka

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// loggerFor is where a reader or writer logs: the connector's Logger
// option when the user gave one, else the subtask's (its lines name job,
// vertex and subtask), else slog.Default().
func (c *commonConfig) loggerFor(subtask *slog.Logger) *slog.Logger {
	if c.userLogger || subtask == nil {
		return c.logger
	}
	return subtask
}

// kgoLogger is a kgo.Logger writing to a slog.Logger (baseOpts gives it
// to every client, before the user's options): franz-go's own lines come
// out in the process's one format, with the subtask's attributes for a
// reader's or writer's clients. franz-go's info
// messages are per-connection and per-request chatter (metadata refreshes,
// connections opened), so the client logs them only when l takes debug;
// otherwise warnings and errors.
type kgoLogger struct{ l *slog.Logger }

// Level implements kgo.Logger.
func (k kgoLogger) Level() kgo.LogLevel {
	switch ctx := context.Background(); {
	case k.l.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelDebug
	case k.l.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	case k.l.Enabled(ctx, slog.LevelError):
		return kgo.LogLevelError
	}
	return kgo.LogLevelNone
}

// Log implements kgo.Logger.
func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	k.l.Log(context.Background(), slogLevel(level), "kafka client: "+msg, keyvals...)
}

func slogLevel(l kgo.LogLevel) slog.Level {
	switch l {
	case kgo.LogLevelError:
		return slog.LevelError
	case kgo.LogLevelWarn:
		return slog.LevelWarn
	case kgo.LogLevelInfo:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}
